"""Which plain-text bytes can be shown as text, and how.

Text-like files (by extension or MIME type) are decoded as UTF-8. ``readable_as`` decides
before anything is downloaded; ``extract_text`` turns the downloaded bytes into text.
``files_read`` and ``mail_attachment`` ask ``tools/documents.py`` first: Word, Excel,
PowerPoint, PDF and .eml go to the isolated document worker, everything else comes here.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

__all__ = [
    "NOT_READABLE_YET",
    "Extracted",
    "decode_text",
    "extract_text",
    "not_text_reason",
    "readable_as",
]

TEXT_EXTENSIONS = frozenset(
    {
        "txt",
        "md",
        "markdown",
        "csv",
        "tsv",
        "json",
        "xml",
        "html",
        "htm",
        "yaml",
        "yml",
        "toml",
        "ini",
        "cfg",
        "conf",
        "log",
        "rst",
        "tex",
        "py",
        "js",
        "ts",
        "tsx",
        "jsx",
        "java",
        "c",
        "h",
        "cpp",
        "hpp",
        "cs",
        "go",
        "rs",
        "rb",
        "php",
        "sh",
        "ps1",
        "bat",
        "sql",
        "css",
        "scss",
        "kt",
        "swift",
        "r",
        "m",
        "pl",
        "lua",
        "ics",
        "vcf",
        "eml",
        "srt",
        "vtt",
    }
)
TEXT_MIME = re.compile(r"^(text/|application/(json|xml|javascript|x-yaml|yaml|x-sh|sql)\b)")
NOT_READABLE_YET = "not readable as text yet: only text-like files are read; metadata only"
IMAGE_EXTENSIONS = frozenset(
    {"png", "jpg", "jpeg", "gif", "bmp", "tif", "tiff", "webp", "heic", "heif", "svg", "ico"}
)
MEDIA_KINDS = {"image": "an image", "video": "a video", "audio": "an audio file"}


def not_text_reason(name: str, content_type: str | None) -> str:
    """Why a file that is neither text nor a document comes back as metadata only, in the
    words a person would use for it (an image is not "not readable as text yet")."""
    extension = name.rsplit(".", 1)[-1].lower() if "." in name else ""
    major = str(content_type or "").split("/", 1)[0].lower()
    if extension in IMAGE_EXTENSIONS:
        major = "image"
    what = MEDIA_KINDS.get(major)
    if what is None:
        return NOT_READABLE_YET
    return (
        f"{what}: this server reads text, not pictures or sound (no OCR or transcription); "
        "its name, type, size and dates are above, and it opens from its web_link"
    )


def readable_as(name: str, content_type: str | None) -> str | None:
    """How bytes with this name and type become text ("text"), or None: not readable yet."""
    extension = name.rsplit(".", 1)[-1].lower() if "." in name else ""
    if extension in TEXT_EXTENSIONS or TEXT_MIME.match(str(content_type or "").lower()):
        return "text"
    return None


def decode_text(data: bytes, *, complete: bool) -> tuple[str, int]:
    """UTF-8 (BOM dropped); undecodable bytes become U+FFFD and are counted."""
    decoder = codecs.getincrementaldecoder("utf-8-sig")(errors="replace")
    text = decoder.decode(data, final=complete)
    return text, text.count("\ufffd")


@dataclass(frozen=True, slots=True)
class Extracted:
    """Text taken from a file's bytes, and how many bytes could not be decoded."""

    text: str
    undecodable_chars: int = 0


async def extract_text(
    data: bytes, *, name: str, content_type: str | None, complete: bool
) -> Extracted | None:
    """The text of ``data``, or None when its kind is not readable (see ``readable_as``)."""
    if readable_as(name, content_type) == "text":
        text, replaced = decode_text(data, complete=complete)
        return Extracted(text, replaced)
    return None
