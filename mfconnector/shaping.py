"""Make Graph JSON fit the limits, and write down everything that was left out.

Pure functions. Every tool result passes through here, so this is the one place that
strips pre-authenticated URLs and attachment bytes, clips long strings and long lists,
and fills the ``skipped`` record that the completeness contract promises.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from mfconnector.errors import ToolInputError

__all__ = [
    "Skipped",
    "clip_text",
    "clip_window",
    "is_secret_key",
    "pick",
    "redact_text",
    "shape_item",
    "strip_secrets",
]

SECRET_KEY_SUFFIXES = ("downloadurl",)
SECRET_KEYS = frozenset({"contentbytes", "thumbnails", "@odata.nextlink", "@odata.deltalink"})
SECRET_MARKERS = ("tempauth=", "access_token=", "sig=")


def is_secret_key(key: str) -> bool:
    """Keys whose values are credentials or raw bytes: never shown, always reported."""
    lowered = key.lower()
    return lowered in SECRET_KEYS or lowered.endswith(SECRET_KEY_SUFFIXES)


URL_PATTERN = re.compile(r"[a-z][a-z0-9+.-]{0,31}://[^\s<>\"']+", re.IGNORECASE)
"""A bounded scheme keeps the scan linear on untrusted text (a long run of letters)."""
REDACTED = "[pre-authenticated link removed]"
ENCODED_URL_PATTERN = re.compile(r"[a-z][a-z0-9+.-]{0,31}%3a%2f%2f[^\s<>\"']+", re.IGNORECASE)
"""A link wrapped inside another one (Outlook Safe Links' ``?url=https%3A%2F%2F...``)."""
CREDENTIAL_PARAM = re.compile(r"\b(?:tempauth|access_token)(?:=|%3d)[^\s&\"'<>]+", re.IGNORECASE)
"""A credential left over where a link was cut short (a quote inside it, say)."""
CREDENTIAL_REMOVED = "[credential removed]"
TEXT_HINTS = ("://", "%3a%2f%2f", "tempauth", "access_token")
"""Cheap substring checks: text without any of these has nothing ``redact_text`` removes."""


def _has_secret_marker(value: str) -> bool:
    """A credential-bearing URL, also when wrapped and percent-encoded (Safe Links ``?url=``)."""
    lowered = value.lower()
    if "://" not in lowered and "%3a%2f%2f" not in lowered:
        return False
    for _ in range(3):
        if any(marker in lowered for marker in SECRET_MARKERS):
            return True
        decoded = unquote(lowered)
        if decoded == lowered:
            break
        lowered = decoded
    return False


def redact_text(text: str) -> tuple[str, int]:
    """Replace URLs that carry a credential inside free text; returns how many were replaced."""
    count = 0

    def replace(match: re.Match[str]) -> str:
        nonlocal count
        if _has_secret_marker(match.group(0)):
            count += 1
            return REDACTED
        return match.group(0)

    lowered = text.lower()
    if not any(hint in lowered for hint in TEXT_HINTS):
        return text, 0
    text = URL_PATTERN.sub(replace, text)
    text = ENCODED_URL_PATTERN.sub(replace, text)

    def drop_param(match: re.Match[str]) -> str:
        nonlocal count
        count += 1
        return CREDENTIAL_REMOVED

    return CREDENTIAL_PARAM.sub(drop_param, text), count


@dataclass
class Skipped:
    """What a result left out, keyed the same way in every tool; at most ``listed`` of the
    removed paths are named (the ``skipped_paths_listed`` limit)."""

    listed: int
    fields: list[dict[str, Any]] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    items: dict[str, Any] | None = None
    text: dict[str, Any] | None = None

    def merge(self, other: Skipped) -> None:
        """Add what one item left out to the record of the whole result."""
        self.fields.extend(other.fields)
        self.removed.extend(other.removed)

    def __bool__(self) -> bool:
        return bool(self.fields or self.removed or self.items or self.text)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.items:
            out["items"] = self.items
        if self.text:
            out["text"] = self.text
        if self.fields:
            out["fields"] = self.fields
        if self.removed:
            out["removed"] = {
                "count": len(self.removed),
                "paths": self.removed[: self.listed],
                "why": "download URLs, thumbnail URLs and attachment bytes are never returned",
            }
        return out

    def apply(self, result: dict[str, Any]) -> dict[str, Any]:
        """Mark ``result`` incomplete when anything was left out; leave it alone otherwise."""
        if self:
            result["incomplete"] = True
            result["skipped"] = self.to_json()
        return result


def strip_secrets(value: Any, skipped: Skipped, path: str) -> Any:
    """Drop URL-bearing keys and credential URLs inside strings, recording each path."""
    cleaned = _strip(value, skipped, path)
    return None if cleaned is _DROPPED else cleaned


def _strip(value: Any, skipped: Skipped, path: str) -> Any:
    if isinstance(value, Mapping):
        clean: dict[str, Any] = {}
        for key, item in value.items():
            child = f"{path}.{key}" if path else str(key)
            if is_secret_key(str(key)):
                skipped.removed.append(child)
                continue
            cleaned = _strip(item, skipped, child)
            if cleaned is not _DROPPED:
                clean[str(key)] = cleaned
        return clean
    if isinstance(value, list):
        kept = []
        for index, item in enumerate(value):
            cleaned = _strip(item, skipped, f"{path}[{index}]")
            if cleaned is not _DROPPED:
                kept.append(cleaned)
        return kept
    if isinstance(value, str) and _has_secret_marker(value):
        skipped.removed.append(path)
        redacted, count = redact_text(value)
        if not count or redacted.strip() == REDACTED:
            return _DROPPED  # the credential is not a plain URL we can cut out: drop it all
        return redacted
    return value


_DROPPED: Any = object()


def clip_text(text: str, limit: int) -> tuple[str, int]:
    """At most ``limit`` characters (code points, so never half an emoji); returns the cut count."""
    if len(text) <= limit:
        return text, 0
    return text[:limit], len(text) - limit


def clip_window(
    text: str, offset: int, limit: int, argument: str
) -> tuple[str, dict[str, Any] | None]:
    """``limit`` characters from ``offset``; the skipped record says how to read on."""
    total = len(text)
    if offset and offset >= total:
        raise ToolInputError(
            f"`{argument}` {offset} is past the end of the text ({total} characters)",
            hint=f"use a {argument} below {total}",
        )
    window, cut = clip_text(text[offset:], limit)
    if not cut and not offset:
        return window, None
    record: dict[str, Any] = {"total_chars": total, "offset": offset, "returned_chars": len(window)}
    if offset:
        record["chars_before"] = offset
    if cut:
        record["next_offset"] = offset + len(window)
    return window, record


def _bound(value: Any, skipped: Skipped, path: str, max_chars: int, max_items: int) -> Any:
    if isinstance(value, str):
        clipped, cut = clip_text(value, max_chars)
        if cut:
            skipped.fields.append(
                {"path": path, "original_chars": len(value), "kept_chars": max_chars}
            )
        return clipped
    if isinstance(value, Mapping):
        return {
            key: _bound(item, skipped, f"{path}.{key}", max_chars, max_items)
            for key, item in value.items()
        }
    if isinstance(value, list):
        kept = value[:max_items]
        if len(value) > max_items:
            skipped.fields.append(
                {"path": path, "original_items": len(value), "kept_items": max_items}
            )
        return [
            _bound(item, skipped, f"{path}[{index}]", max_chars, max_items)
            for index, item in enumerate(kept)
        ]
    return value


def pick(item: Mapping[str, Any], fields: Iterable[str]) -> dict[str, Any]:
    """Graph's own field names, only those the tool asked Graph for."""
    return {name: item[name] for name in fields if name in item}


def shape_item(
    item: Any,
    fields: Iterable[str],
    skipped: Skipped,
    path: str,
    *,
    max_chars: int,
    max_items: int,
) -> dict[str, Any]:
    """Keep the asked-for fields, strip secrets (reported), then bound strings and lists.

    A download URL or attachment bytes Graph sent anyway, although the tool did not ask
    for them, are reported as removed; a field the tool never returns is not looked into,
    so a link inside it cannot make a result look incomplete.
    """
    if not isinstance(item, Mapping):
        skipped.fields.append({"path": path, "reason": "Graph returned a non-object item"})
        return {}
    picked = pick(item, fields)
    for key in item:
        if key not in picked and is_secret_key(str(key)):
            skipped.removed.append(f"{path}.{key}" if path else str(key))
    clean = strip_secrets(picked, skipped, path)
    bounded: dict[str, Any] = _bound(clean, skipped, path, max_chars, max_items)
    return bounded
