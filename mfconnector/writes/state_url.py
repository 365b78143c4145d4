"""``--state-url`` (``MFC_STATE_URL``): where the acting tools keep their state.

Unset: the SQLite file of ``--state-dir``, as before (memory with ``--demo``). Set to
``redis://HOST:PORT/DB`` (or ``rediss://`` for TLS; a password as ``redis://:PASSWORD@``
or better in the URL given by the environment): Redis, shared by every process or
replica given the same URL. The URL is checked before anything starts; Redis itself is
reached once at start-up, so a server never starts without the state it was told to use.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from mfconnector.limits import Limits

if TYPE_CHECKING:
    from mfconnector.writes.redis_store import RedisState

__all__ = [
    "STATE_START_HINT",
    "STATE_URL_ENV",
    "StateUrlError",
    "open_state",
    "shared_state",
    "state_url_of",
]

STATE_URL_ENV = "MFC_STATE_URL"
SCHEMES = ("redis", "rediss")
REDIS_DATABASES = 16
"""Redis's default ``databases`` setting: DB numbers 0..15."""
_EXAMPLE = "redis://127.0.0.1:6379/0"
STATE_START_HINT = "the server did not start: start Redis, or correct --state-url (MFC_STATE_URL)"


class StateUrlError(ValueError):
    """A ``--state-url`` that cannot name a state store; the message says why."""


def _shown(raw: str) -> str:
    from mfconnector.writes.redis_store import redacted_url

    try:
        return repr(redacted_url(raw)[:80])
    except ValueError:
        return "(unreadable)"


def state_url_of(args: argparse.Namespace, env: Mapping[str, str]) -> str | None:
    """The checked URL, or None for the local SQLite store; ``StateUrlError`` otherwise."""
    raw = (getattr(args, "state_url", None) or env.get(STATE_URL_ENV, "")).strip()
    if not raw:
        return None
    try:
        parts = urlsplit(raw)
        port = parts.port
    except ValueError:
        raise StateUrlError(
            f"--state-url {_shown(raw)} has an invalid port; use {_EXAMPLE}"
        ) from None
    if parts.scheme not in SCHEMES:
        raise StateUrlError(
            f"--state-url must be a redis:// or rediss:// URL, like {_EXAMPLE}, not "
            f"{_shown(raw)} (leave it unset for the local state file)"
        )
    if not parts.hostname:
        raise StateUrlError(f"--state-url {_shown(raw)} names no host; use {_EXAMPLE}")
    if port == 0:
        raise StateUrlError(f"--state-url {_shown(raw)} has port 0; use {_EXAMPLE}")
    database = parts.path.strip("/")
    if database and (not database.isdigit() or int(database) >= REDIS_DATABASES):
        raise StateUrlError(
            f"--state-url {_shown(raw)}: the path must be a database number 0-"
            f"{REDIS_DATABASES - 1}, like {_EXAMPLE}"
        )
    if parts.query or parts.fragment:
        raise StateUrlError(
            f"--state-url {_shown(raw)} has a query or fragment, which this server does not "
            f"read; use {_EXAMPLE}"
        )
    return raw


def open_state(url: str, limits: Limits) -> RedisState:
    """Connect (importing redis only now) and reach it once; ``StateStoreError`` if not."""
    from mfconnector.writes.redis_store import RedisState

    state = RedisState(url, limits=limits)
    state.check()
    state.cursor_key()
    return state


def shared_state(args: argparse.Namespace, limits: Limits) -> RedisState | None:
    """The Redis state of ``--state-url``, reached once; None for the local state file.

    Raises ``StateUrlError`` (a usage error) or ``StateStoreError`` (Redis unreachable).
    """
    import os

    url = state_url_of(args, os.environ)
    if url is None:
        return None
    state = open_state(url, limits)
    if getattr(args, "demo", False):
        state.demo_epoch()  # read now, not from inside the event loop
    return state
