"""Which files are documents this package reads, from their name or their media type."""

from __future__ import annotations

__all__ = ["DOCUMENT_KINDS", "LEGACY_FORMATS", "document_kind", "legacy_format"]

_WORD = "application/vnd.openxmlformats-officedocument.wordprocessingml."
_EXCEL = "application/vnd.openxmlformats-officedocument.spreadsheetml."
_POWERPOINT = "application/vnd.openxmlformats-officedocument.presentationml."
EXTENSIONS = {
    "docx": "docx",
    "docm": "docx",
    "dotx": "docx",
    "xlsx": "xlsx",
    "xlsm": "xlsx",
    "xltx": "xlsx",
    "pptx": "pptx",
    "pptm": "pptx",
    "ppsx": "pptx",
    "potx": "pptx",
    "pdf": "pdf",
    "eml": "eml",
}
MIME_PREFIXES = (
    (_WORD, "docx"),
    (_EXCEL, "xlsx"),
    (_POWERPOINT, "pptx"),
    ("application/vnd.ms-word.document.macroenabled", "docx"),
    ("application/vnd.ms-excel.sheet.macroenabled", "xlsx"),
    ("application/vnd.ms-powerpoint.presentation.macroenabled", "pptx"),
    ("application/pdf", "pdf"),
    ("message/rfc822", "eml"),
)
DOCUMENT_KINDS = frozenset(EXTENSIONS.values())
LEGACY_FORMATS = {
    "doc": "Word 97-2003 (.doc)",
    "xls": "Excel 97-2003 (.xls)",
    "ppt": "PowerPoint 97-2003 (.ppt)",
    "msg": "Outlook item (.msg)",
}
"""Binary formats not read: the answer says which format and how to make it readable."""

NAMES = {
    "docx": "Word document",
    "xlsx": "Excel workbook",
    "pptx": "PowerPoint presentation",
    "pdf": "PDF",
    "eml": "e-mail message",
}


def _extension(name: str) -> str:
    return name.rsplit(".", 1)[-1].lower() if "." in name else ""


def document_kind(name: str, mime: str | None) -> str | None:
    """docx, xlsx, pptx, pdf or eml; the extension wins, the media type is the fallback."""
    by_name = EXTENSIONS.get(_extension(name))
    if by_name:
        return by_name
    lowered = (mime or "").lower()
    for prefix, kind in MIME_PREFIXES:
        if lowered.startswith(prefix):
            return kind
    return None


def legacy_format(name: str) -> str | None:
    return LEGACY_FORMATS.get(_extension(name))
