"""Live-mode tokens from msal: silent in the server, never interactive.

The blocking *sessions* live in ``sessions`` (one msal application and one token store
each); the CLI commands use them directly. ``MsalTokenProvider`` is the trio face the server
sees: every session call runs in a worker
thread (``trio.to_thread.run_sync``), one at a time (``CapacityLimiter(1)``: one msal app,
one cache, one HTTP session), under a trio deadline on top of msal's own HTTP ``timeout``.
The msal application is built lazily inside that thread, because its constructor already
talks to the network.

A 401 from Graph makes the Graph client call ``get_token(force_refresh=True, claims=...)``:
that becomes ``acquire_token_silent_with_error(force_refresh=True, claims_challenge=...)``,
and the app declares ``client_capabilities=["CP1"]`` so Graph may send such challenges.

msal is imported only inside functions (``sessions``), never at import time.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import trio

from mfconnector.auth.config import AuthConfig
from mfconnector.auth.errors import network_error
from mfconnector.auth.sessions import error_fields, make_session
from mfconnector.errors import AuthError

__all__ = ["MsalTokenProvider", "build_token_provider"]

T = TypeVar("T")


class MsalTokenProvider:
    """``TokenProvider`` for live mode (delegated or app-only, as ``config`` says).

    ``http_client`` is msal's transport seam (an object with requests-like ``get``/``post``);
    tests pass a fake identity provider there. Production passes nothing.
    """

    def __init__(self, config: AuthConfig, *, http_client: Any = None) -> None:
        self.config = config
        self._session = make_session(config, http_client=http_client)
        self._limiter = trio.CapacityLimiter(1)
        self._last_error: AuthError | None = None

    async def _run(self, fn: Callable[[], T]) -> T:
        try:
            with trio.fail_after(self.config.call_timeout_seconds):
                return await trio.to_thread.run_sync(
                    fn,
                    limiter=self._limiter,
                    # A cancelled request returns at once; the thread finishes (bounded by
                    # msal's HTTP timeout) and saves the cache, and the limiter stays held
                    # until it has, so msal still runs one call at a time.
                    abandon_on_cancel=True,
                    thread_name="mfconnector-msal",
                )
        except trio.TooSlowError:
            raise network_error(self.config.cloud.authority_host, timed_out=True) from None

    async def get_token(self, *, force_refresh: bool = False, claims: str | None = None) -> str:
        try:
            token = await self._run(functools.partial(self._session.token, force_refresh, claims))
        except AuthError as exc:
            self._last_error = exc
            raise
        self._last_error = None
        return token

    async def describe(self) -> dict[str, Any]:
        """Account facts for ``account_status``; never raises for a sign-in problem."""
        try:
            facts = await self._run(self._session.facts)
        except AuthError as exc:
            facts = {
                "signedIn": False,
                "mode": self.config.mode,
                "authority": self.config.authority,
                "cacheLocation": str(self.config.cache_path),
                "network": self.config.network.describe(),
                **error_fields(exc),
            }
        if self._last_error is not None and "error" not in facts:
            facts.update(error_fields(self._last_error))
        return facts


def build_token_provider(config: AuthConfig, *, http_client: Any = None) -> MsalTokenProvider:
    """The live-mode provider for ``config`` (delegated or app-only). Builds no msal app yet."""
    return MsalTokenProvider(config, http_client=http_client)
