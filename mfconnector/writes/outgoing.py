"""Outgoing input checked like incoming: recipients, subjects and attachment names.

What no mail client would send is refused before any request: an address holding NUL,
CR/LF, a bidi or zero-width control (``mfconnector.visible``), an RFC 5322 comment
(``a@b.c(CEO)``), quotes, angle brackets or spaces; a subject with a control character; an
attachment name that is a path (``../``, ``C:\\``, ``/etc``), holds a control or bidi
character, or is longer than ``Limits.attachment_name_chars``; a ``content_type`` that is
not one ``type/subtype`` token (RFC 6838 section 4.2). Look-alikes are not refused but
flagged: a label (the local part, each domain label) that mixes scripts, such as a Cyrillic
``а`` in a Latin domain, is named in the preview's ``warnings`` with the foreign letters
shown as ``<U+0430>`` (UTS #39 "mixed-script" detection, restricted to single labels).

Recipients come in the forms the read tools hand out: ``"addr"``, ``"Name <addr>"`` (what
``mail_read`` shows) or ``{"name": ..., "address": ...}``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from typing import Any

from mfconnector.limits import Limits
from mfconnector.visible import find_hidden, make_visible
from mfconnector.writes.errors import WriteError

__all__ = [
    "check_attachment_name",
    "check_content_type",
    "check_subject",
    "mixed_script_labels",
    "parse_recipient",
    "record_warnings",
]

_NAMED = re.compile(r"^\s*(?P<name>[^<>]*?)\s*<(?P<address>[^<>]*)>\s*$")
_LOCAL_FORBIDDEN = frozenset(' \t"(),:;<>@[\\]')
"""Specials of RFC 5322 section 3.2.3 outside a quoted string, and whitespace: an address
that needs them is one no assistant should be composing."""
_DOMAIN_LABEL = re.compile(r"^(?!-)[^\W_](?:[\w-]{0,61}[^\W_])?$", re.UNICODE)
_TOKEN = r"[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}"
_CONTENT_TYPE = re.compile(rf"^{_TOKEN}/{_TOKEN}$")
"""RFC 6838 section 4.2: type and subtype names, each 1-127 restricted characters."""
_COMPATIBLE_SCRIPTS = (
    frozenset({"LATIN", "HAN", "HIRAGANA", "KATAKANA"}),
    frozenset({"LATIN", "HAN", "BOPOMOFO"}),
    frozenset({"LATIN", "HAN", "HANGUL"}),
)
"""UTS #39 "highly restrictive": the script mixes that are ordinary writing, not tricks."""
_SCRIPT_WORDS = {"CJK": "HAN", "IDEOGRAPHIC": "HAN"}


def _invalid(message: str, hint: str) -> WriteError:
    return WriteError("invalid_arguments", message, hint=hint)


def _hidden_refusal(argument: str, value: str, what: str) -> WriteError | None:
    hidden = find_hidden(value)
    if hidden is None:
        return None
    return _invalid(
        f"`{argument}` {what} holds invisible or control characters "
        f"({', '.join(hidden.code_points[:5])}): {hidden.visible[:120]!r}; nothing was done",
        "type the text again without them; what the person confirms must be what they read",
    )


def check_address(address: str, argument: str) -> str:
    """One plain address, or an error in our words that says what is wrong with it."""
    refusal = _hidden_refusal(argument, address, "address")
    if refusal is not None:
        raise refusal
    if "(" in address or ")" in address:
        raise _invalid(
            f"`{argument}` address {address[:80]!r} carries an RFC 5322 comment in "
            "parentheses; nothing was done",
            "pass the bare address (name@example.com); put a name in 'Name <address>'",
        )
    local, at, domain = address.rpartition("@")
    labels = domain.split(".")
    if (
        not at
        or not 0 < len(local) <= 64
        or not 0 < len(domain) <= 255
        or _LOCAL_FORBIDDEN & set(local)
        or local.startswith(".")
        or local.endswith(".")
        or ".." in local
        or len(labels) < 2
        or not all(_DOMAIN_LABEL.match(label) for label in labels)
    ):
        raise _invalid(
            f"`{argument}` holds {address[:80]!r}, which is not an email address; nothing was done",
            "pass addresses such as name@example.com or 'Name <name@example.com>'",
        )
    return address


def _check_name(name: str, argument: str, limits: Limits) -> str:
    refusal = _hidden_refusal(argument, name, "name")
    if refusal is not None:
        raise refusal
    if len(name) > limits.display_name_chars:
        raise _invalid(
            f"`{argument}` name is {len(name)} characters; at most {limits.display_name_chars}",
            "use a shorter name",
        )
    if "<" in name or ">" in name:
        raise _invalid(
            f"`{argument}` name {name[:80]!r} holds angle brackets: it would read as another "
            "address; nothing was done",
            "give the person's name only, such as Megan Bowen",
        )
    return name


def parse_recipient(item: Any, argument: str, limits: Limits) -> tuple[str, str]:
    """(name, address) of one recipient as the read tools show it; name may be empty."""
    if isinstance(item, dict):
        keys = set(item)
        if not {"address"} <= keys <= {"name", "address"} or not all(
            isinstance(item[k], str) for k in keys
        ):
            raise _invalid(
                f"`{argument}` must be an address string or an object "
                '{"name": ..., "address": ...} of strings',
                'for example {"name": "Megan Bowen", "address": "megan@contoso.com"}',
            )
        name, address = item.get("name", "").strip(), item["address"].strip()
    elif isinstance(item, str):
        match = _NAMED.match(item)
        if match is not None:
            name, address = match["name"].strip(), match["address"].strip()
            if len(name) >= 2 and name[0] == name[-1] == '"':
                name = name[1:-1].strip()
        else:
            name, address = "", item.strip()
    else:
        raise _invalid(
            f"`{argument}` must be an address string or a {{name, address}} object",
            "pass 'name@example.com', 'Name <name@example.com>' or {name, address}",
        )
    if not 0 < len(address) <= limits.action_list_item_chars:
        raise _invalid(
            f"`{argument}` address must be 1-{limits.action_list_item_chars} characters",
            "pass plain addresses such as name@example.com",
        )
    return _check_name(name, argument, limits), check_address(address, argument)


def check_subject(subject: str) -> str:
    """A subject is one line: CR, LF, NUL and other controls would forge header lines."""
    controls = sorted({f"U+{ord(c):04X}" for c in subject if unicodedata.category(c) == "Cc"})
    if controls:
        raise _invalid(
            f"`subject` holds control characters ({', '.join(controls[:5])}): "
            f"{make_visible(subject)[:120]!r}; nothing was done",
            "write the subject on one line, without control characters",
        )
    return subject


def check_attachment_name(name: str, argument: str, limits: Limits) -> str:
    """A file name, never a path: no separators, no drive, no ``..``, nothing invisible."""
    refusal = _hidden_refusal(argument, name, "name")
    if refusal is not None:
        raise refusal
    if len(name) > limits.attachment_name_chars:
        raise _invalid(
            f"`{argument}` is {len(name):,} characters; at most {limits.attachment_name_chars}",
            "use a shorter file name",
        )
    if any(c in name for c in "/\\:") or name.strip(" .") == "" or name != name.strip():
        raise _invalid(
            f"`{argument}` {name[:80]!r} is not a plain file name (no folders, drive letters "
            "or leading and trailing spaces); nothing was done",
            "pass the file's own name, such as report.pdf",
        )
    return name


def check_content_type(value: str, argument: str) -> str:
    if not _CONTENT_TYPE.match(value):
        raise _invalid(
            f"`{argument}` {make_visible(value)[:80]!r} is not a media type (type/subtype)",
            "pass a media type such as application/pdf, or leave it out",
        )
    return value


# --- look-alikes, for the preview -----------------------------------------------------


def _script(char: str) -> str | None:
    """The script of a letter, from its Unicode name; None for digits, marks, punctuation."""
    if not unicodedata.category(char).startswith("L"):
        return None
    words = unicodedata.name(char, "").split()
    for word in words[:2]:
        if word in _SCRIPT_WORDS:
            return _SCRIPT_WORDS[word]
        if word not in ("FULLWIDTH", "HALFWIDTH", "MATHEMATICAL", "SMALL", "CAPITAL"):
            return word
    return words[0] if words else None


def _mixed(label: str) -> tuple[list[str], str] | None:
    """The scripts of a label that mixes them, and the label with the minority shown."""
    scripts: dict[str, int] = {}
    for char in label:
        script = _script(char)
        if script is not None:
            scripts[script] = scripts.get(script, 0) + 1
    if len(scripts) < 2 or any(set(scripts) <= allowed for allowed in _COMPATIBLE_SCRIPTS):
        return None
    main = max(scripts, key=lambda s: (scripts[s], s == "LATIN"))
    shown = "".join(f"<U+{ord(c):04X}>" if _script(c) not in (None, main) else c for c in label)
    return sorted(scripts), shown


def mixed_script_labels(address: str) -> list[dict[str, Any]]:
    """Each label of ``address`` (local part, domain labels) that mixes scripts."""
    local, _, domain = address.rpartition("@")
    found = []
    for label in [local, *domain.split(".")]:
        mixed = _mixed(label)
        if mixed is not None:
            found.append({"label": label, "scripts": mixed[0], "shown_as": mixed[1]})
    return found


_ADDRESS_LIKE = re.compile(r"[^\s<>()\"']+@[^\s<>()\"']+\.[^\s<>()\"']+")


def _address_in_name(name: str) -> str | None:
    """An address written into a display name ("boss@corp.com" <x@evil.example>)."""
    match = _ADDRESS_LIKE.search(name)
    return match.group(0) if match else None


def _people(record: dict[str, Any]) -> Iterable[tuple[str, dict[str, str]]]:
    sender = record.get("from")
    if isinstance(sender, dict):
        yield "from", sender
    for key in ("to", "cc", "bcc", "reply_to"):
        for index, person in enumerate(record.get(key) or []):
            yield f"{key}[{index}]", person


def record_warnings(record: dict[str, Any]) -> list[dict[str, Any]]:
    """What the person must look at twice in a frozen message: look-alike addresses, and
    names, subjects and attachment names with invisible characters (shown made visible)."""
    warnings: list[dict[str, Any]] = []
    for where, person in _people(record):
        for key in ("name", "address"):
            hidden = find_hidden(person.get(key, ""))
            if hidden is not None:
                warnings.append(hidden.as_warning(f"{where}.{key}"))
        for label in mixed_script_labels(person.get("address", "")):
            warnings.append({"kind": "mixed_script", "field": f"{where}.address", **label})
        named = _address_in_name(person.get("name", ""))
        if named is not None and named.lower() != person.get("address", "").lower():
            warnings.append(
                {
                    "kind": "name_is_another_address",
                    "field": f"{where}.name",
                    "name": person["name"],
                    "address": person.get("address", ""),
                }
            )
    hidden = find_hidden(record.get("subject", ""))
    if hidden is not None:
        warnings.append(hidden.as_warning("subject"))
    for index, attachment in enumerate(record.get("attachments") or []):
        hidden = find_hidden(attachment.get("name", ""))
        if hidden is not None:
            field = f"attachments[{index}].name"
            warnings.append(hidden.as_warning(field))
    return warnings
