"""Signed continuation cursors: the server accepts back exactly what it issued, and nothing else.

A cursor carries where a listing continues, as the account's backend wrote it (its
``Page.next`` or ``Page.here`` position: Graph's next link, IMAP's UID range, Gmail's page
token) and how many of that page's items were already shown. The tools never read a
position; the server checks an HMAC-SHA256 tag over the cursor instead. Anything forged,
altered or cut short fails that check, and so does a cursor redeemed by another tool, for
another account or mailbox (the scope) or with other arguments (filters, folder, query)
than the call that earned it. Whatever the tag says, the backend checks a position again
before it acts on it (Graph: the link's scheme, host, port and path under the root, before
the bearer token goes anywhere).

The key is made per process, in memory, never on disk. An MCP stdio server lives as long
as its client's session; a cursor is a handle inside that conversation, not a bookmark. A
per-process key needs no state directory, no file mode, no rotation, and leaves nothing
behind to steal. Its cost: a cursor from an earlier run of the server is refused, with a
message that says so and how to start the listing again.

Wire form: ``<base64url payload>.<base64url tag>``, the payload being compact JSON
``{"v":3,"i":run,"t":tool,"s":scope tag,"a":arguments tag,"p":position,"k":skip}``, plus
``"c"``: the issuing call's arguments, when the listing carries them (``issue(carry=True)``),
and ``"u"``: the hosted user's tag, when the signer has a ``binding``.
"""

from __future__ import annotations

import base64
import binascii
import functools
import hmac
import json
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from mfconnector.errors import ToolInputError
from mfconnector.limits import DEFAULT_LIMITS

__all__ = ["CURSOR_HINT", "Continuation", "CursorSigner"]

CURSOR_VERSION = 3
KEY_BYTES = 32
"""HMAC-SHA256 key size: the hash's own block strength."""
TAG_BYTES = 16
"""Bytes of a scope or arguments tag kept in the payload (the cursor's own tag is whole)."""
SCOPE_TAGS_KEPT = 64
"""Scope tags a signer remembers (a scope is an account and mailbox: a server has few)."""

CURSOR_HINT = (
    "pass skipped.items.cursor from this tool's previous result unchanged, "
    "or call without a cursor to start from the first page"
)
_UNCHANGED = "pass the `cursor` value from the previous result unchanged"
_NOT_OURS = f"this cursor is not one this server issued; {_UNCHANGED}"
_BASE64URL_RE = re.compile(r"^[A-Za-z0-9_-]+$")
_TOOL_RE = re.compile(r"^[A-Za-z0-9_.\-]{1,64}$")


@dataclass(frozen=True, slots=True)
class Continuation:
    """Where to continue: the backend's position and how many of its items to skip.

    It remembers what the redeemed cursor was bound to, so ``CursorSigner.reissue`` can
    hand out the next cursor of the same listing with the same binding.
    """

    position: dict[str, Any]
    skip: int
    tool: str = field(default="", repr=False)
    scope_tag: str = field(default="", repr=False)
    arguments_tag: str = field(default="", repr=False)
    arguments: dict[str, Any] | None = field(default=None, repr=False)
    """The issuing call's arguments (less cursor and limit), when the cursor carries them."""


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    """Strict base64url: only the one spelling ``_b64`` gives (no padding, no spare bits)."""
    if not _BASE64URL_RE.match(text) or len(text) % 4 == 1:
        raise ValueError("not base64url")
    data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    if _b64(data) != text:
        raise ValueError("not the canonical spelling")
    return data


def _canonical(value: Mapping[str, Any]) -> bytes:
    """One byte string per mapping, whatever its key order (the thing a tag is taken of)."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, default=str
    ).encode("ascii")


def _refuse(message: str) -> ToolInputError:
    return ToolInputError(message, hint=CURSOR_HINT)


@functools.cache
def _hosted_process_key() -> bytes:
    """The one key of this process's hosted users when no state store shares one (made on
    first use, in memory): their cursors verify under it, so one user's cursor redeemed by
    another is told apart from a cursor of an earlier run."""
    return secrets.token_bytes(KEY_BYTES)


class CursorSigner:
    """Issues cursors and redeems them, under one key held in memory for this process.

    A hosted server passes the key its replicas share (from the state store) and the
    user's subject key as ``binding``: every scope tag then includes the subject, and the
    cursor names its user's tag, so one user's cursor is refused for another (and said to
    be another user's) even though all are signed with one key. Without a store the
    hosted users of one process share one in-memory key.
    """

    def __init__(
        self,
        *,
        max_chars: int = DEFAULT_LIMITS.cursor_chars,
        key: bytes | None = None,
        binding: str = "",
    ):
        if key is None:
            key = _hosted_process_key() if binding else secrets.token_bytes(KEY_BYTES)
        self._key = key
        if len(self._key) < KEY_BYTES:
            raise ValueError(f"a cursor key needs at least {KEY_BYTES} bytes")
        self._max_chars = max_chars
        self._binding = binding
        self._keyed = hmac.new(self._key, digestmod="sha256")
        """Keyed once: each tag copies it (a quarter cheaper than keying every digest)."""
        self._scope_tags: dict[bytes, str] = {}
        """Scope tags by their canonical scope: one per account (and hosted user)."""
        self._run = _b64(self._mac(b"run")[:6])
        """Names this process's key, so a cursor from an earlier run gets its own message."""
        self._user = self._tag("user", {"subject": binding}) if binding else ""
        """Names the hosted user a cursor was issued to (``u``), for its own message."""

    @property
    def max_chars(self) -> int:
        """Longest cursor issued or accepted (``Limits.cursor_chars``)."""
        return self._max_chars

    def issue(
        self,
        *,
        tool: str,
        scope: Mapping[str, Any],
        arguments: Mapping[str, Any] | None = None,
        position: Mapping[str, Any],
        skip: int = 0,
        carry: bool = False,
    ) -> str:
        """The cursor for ``position`` (``skip`` of its items already shown).

        ``carry`` keeps ``arguments`` themselves in the signed payload, so a call that passes
        only the cursor continues with the same folder, filters and view; when they would
        make the cursor too long, the cursor is issued without them.

        Raises ValueError for a negative skip or a cursor longer than ``max_chars``: the
        caller then reports the result as incomplete without a cursor.
        """
        tags = (self._scope_tag(scope), self._tag("arguments", arguments or {}))
        if carry:
            try:
                return self._sign(tool, *tags, position, skip, dict(arguments or {}))
            except ValueError:
                pass  # too long with them: a cursor that needs the arguments restated
        return self._sign(tool, *tags, position, skip)

    def reissue(
        self, continuation: Continuation, *, position: Mapping[str, Any], skip: int = 0
    ) -> str:
        """The next cursor of the listing ``continuation`` came from: the same binding."""
        c = continuation
        if c.arguments is not None:
            try:
                return self._sign(c.tool, c.scope_tag, c.arguments_tag, position, skip, c.arguments)
            except ValueError:
                pass
        return self._sign(c.tool, c.scope_tag, c.arguments_tag, position, skip)

    def carried_arguments(self, cursor: Any, *, tool: str) -> dict[str, Any] | None:
        """The arguments a cursor of ``tool`` carries, or None (not ours, or none carried).

        Only reads: ``redeem`` still judges the cursor, its scope and its arguments.
        """
        if not isinstance(cursor, str) or len(cursor) > self._max_chars:
            return None
        try:
            doc = self._verified(cursor)
        except ToolInputError:
            return None
        carried = doc.get("c")
        if doc.get("t") != tool or not isinstance(carried, dict):
            return None
        return carried

    def _sign(
        self,
        tool: str,
        scope_tag: str,
        arguments_tag: str,
        position: Mapping[str, Any],
        skip: int,
        arguments: dict[str, Any] | None = None,
    ) -> str:
        if type(skip) is not int or skip < 0:
            raise ValueError("skip must be a non-negative int")
        doc: dict[str, Any] = {
            "v": CURSOR_VERSION,
            "i": self._run,
            "t": tool,
            "s": scope_tag,
            "a": arguments_tag,
            "p": dict(position),
            "k": skip,
        }
        if self._user:
            doc["u"] = self._user
        if arguments is not None:
            doc["c"] = arguments
        payload = json.dumps(doc, separators=(",", ":"), ensure_ascii=True).encode("ascii")
        cursor = f"{_b64(payload)}.{_b64(self._mac(payload))}"
        if len(cursor) > self._max_chars:
            raise ValueError(
                f"cursor would be {len(cursor):,} characters (max {self._max_chars:,})"
            )
        return cursor

    def redeem(
        self,
        cursor: Any,
        *,
        tool: str,
        scope: Mapping[str, Any],
        arguments: Mapping[str, Any] | None = None,
    ) -> Continuation:
        """Where ``cursor`` continues, or ToolInputError saying what to do instead.

        ``arguments`` None means the call restated none (only the cursor): the cursor
        continues the listing it was issued for. Otherwise they must equal the issuing
        call's. Nothing here sends a request.
        """
        if not isinstance(cursor, str):
            raise _refuse(f"the cursor must be a string; {_UNCHANGED}")
        if len(cursor) > self._max_chars:
            raise _refuse(
                f"the cursor is longer than {self._max_chars:,} characters, so it is not one "
                f"this server issued; {_UNCHANGED}"
            )
        doc = self._verified(cursor)
        if not hmac.compare_digest(str(doc.get("u", "")), self._user):
            raise _refuse(
                "this cursor was issued to another user of this server: call without a "
                "cursor to start your own listing"
            )
        issued_for = doc.get("t")
        if issued_for != tool:
            named = (
                f"`{issued_for}`"
                if isinstance(issued_for, str) and _TOOL_RE.match(issued_for)
                else "another tool"
            )
            raise _refuse(
                f"this cursor belongs to {named}, not `{tool}`: pass it to the tool that "
                "returned it, or call this tool without a cursor"
            )
        if not hmac.compare_digest(str(doc.get("s")), self._scope_tag(scope)):
            raise _refuse(
                "this cursor continues a listing of another account, mailbox or drive; "
                "call without a cursor to list this one"
            )
        if arguments is not None and not hmac.compare_digest(
            str(doc.get("a")), self._tag("arguments", arguments)
        ):
            raise _refuse(
                f"this cursor continues a `{tool}` listing made with other arguments "
                "(folder, filters or query): repeat that call's arguments with the cursor, "
                "or pass only the cursor"
            )
        position, skip = doc.get("p"), doc.get("k")
        if not isinstance(position, dict):
            raise _refuse(f"{_NOT_OURS} (it names no position)")
        if type(skip) is not int or skip < 0:
            raise _refuse(f"{_NOT_OURS} (its item offset is out of range)")
        carried = doc.get("c") if isinstance(doc.get("c"), dict) else None
        return Continuation(position, skip, tool, str(doc["s"]), str(doc["a"]), carried)

    def _verified(self, text: str) -> dict[str, Any]:
        """The payload of a cursor whose tag is ours; a clear refusal otherwise."""
        payload_text, dot, tag_text = text.partition(".")
        if not _BASE64URL_RE.match(payload_text) or not _BASE64URL_RE.match(tag_text or "A"):
            raise _refuse(f"{_NOT_OURS} (it is not a cursor's text)")
        try:
            payload = _unb64(payload_text)
            tag = _unb64(tag_text) if dot else b""
        except (ValueError, binascii.Error):
            raise _refuse(f"{_NOT_OURS} (it was altered or cut short)") from None
        if not hmac.compare_digest(tag, self._mac(payload)):
            if self._from_another_run(payload):
                raise _refuse(
                    "this cursor was issued by an earlier run of the server (cursors last as "
                    "long as the server process): call without a cursor to start the listing "
                    "again"
                )
            raise _refuse(f"{_NOT_OURS} (it was altered or cut short)")
        doc: dict[str, Any] = json.loads(payload)  # our own bytes: the tag proves it
        return doc

    def _from_another_run(self, payload: bytes) -> bool:
        """Only picks the message: an unverified payload is never otherwise used."""
        try:
            doc = json.loads(payload.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            return False
        return isinstance(doc, dict) and isinstance(doc.get("i"), str) and doc["i"] != self._run

    def _mac(self, data: bytes) -> bytes:
        mac = self._keyed.copy()
        mac.update(data)
        return mac.digest()

    def _scope_tag(self, scope: Mapping[str, Any]) -> str:
        """The tag of a call's scope, taken once per scope: every call of an account has
        the same one."""
        if self._binding:
            scope = {**scope, "\x00subject": self._binding}
        canonical = _canonical(scope)
        tag = self._scope_tags.get(canonical)
        if tag is None:
            if len(self._scope_tags) >= SCOPE_TAGS_KEPT:
                self._scope_tags.clear()
            tag = self._scope_tags[canonical] = self._tagged("scope", canonical)
        return tag

    def _tag(self, kind: str, value: Mapping[str, Any]) -> str:
        return self._tagged(kind, _canonical(value))

    def _tagged(self, kind: str, canonical: bytes) -> str:
        return _b64(self._mac(kind.encode("ascii") + b"\0" + canonical)[:TAG_BYTES])
