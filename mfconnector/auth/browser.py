"""Browser sign-in: authorization code with PKCE, answered on a loopback redirect.

msal's ``acquire_token_interactive`` does the protocol (PKCE, state, nonce, the code
redemption) and its ``AuthCodeReceiver`` listens on ``http://localhost:<port>`` for the
sign-in page's ``form_post``. What we add is the seam where the browser is opened: msal
opens it itself through ``webbrowser`` and, when that fails, only logs the address. We hand
msal a receiver (its documented ``auth_code_receiver`` pass-through) that opens the address
with our ``BrowserOpener`` — the system browser in production, a test browser in tests — and
tells the user on the terminal stream what is happening, including the address to open by
hand if no browser came up. Everything here blocks; nothing is written to stdout.
"""

from __future__ import annotations

import threading
import webbrowser
from collections.abc import Callable
from typing import Any, TextIO

from mfconnector.auth.terminal import say

__all__ = [
    "SUCCESS_PAGE",
    "BrowserOpener",
    "OpeningReceiver",
    "can_open_browser",
    "open_system_browser",
]

BrowserOpener = Callable[[str], bool]
"""Opens a URL in a browser on this computer; False when none could be opened."""

SUCCESS_PAGE = (
    "Signed in to mfconnector. You can close this tab and return to the terminal.\n\n"
    "For your security: do not share the contents of this page or the address bar."
)
_CONSOLE_BROWSERS = frozenset({"www-browser", "links", "elinks", "lynx", "w3m"})
"""Text browsers would take over the terminal the prompt is on: the device code suits better."""


def can_open_browser() -> bool:
    """Whether a graphical browser can be opened here (not over SSH without a display)."""
    try:
        controller = webbrowser.get()
    except webbrowser.Error:
        return False
    return getattr(controller, "name", "") not in _CONSOLE_BROWSERS


def open_system_browser(url: str) -> bool:
    """The user's default browser, in a new tab where it can."""
    try:
        return bool(webbrowser.open(url, new=2))
    except webbrowser.Error:
        return False


class OpeningReceiver:
    """msal's loopback receiver, with the browser opened by us.

    msal calls ``get_auth_response(auth_uri=..., state=..., timeout=..., ...)``. We open
    ``auth_uri`` with ``opener``, then let the real receiver wait for the redirect without
    opening anything itself (it gets no ``auth_uri``). ``close()`` ends the wait at once.
    """

    def __init__(self, inner: Any, opener: BrowserOpener, say: Callable[[str], None]) -> None:
        self._inner = inner
        self._opener = opener
        self._say = say

    def get_port(self) -> int:
        return int(self._inner.get_port())

    def get_auth_response(
        self, *, auth_uri: str, state: str, timeout: float | None = None, **ignored: Any
    ) -> dict[str, Any] | None:
        # Listen first, then open: some openers (a $BROWSER command) return only when the
        # browser exits, which may be after it has been redirected to us.
        box: dict[str, dict[str, Any] | None] = {}

        def wait() -> None:
            box["response"] = self._inner.get_auth_response(
                state=state, timeout=timeout, success_template=SUCCESS_PAGE
            )

        waiter = threading.Thread(target=wait, name="mfconnector-redirect", daemon=True)
        waiter.start()
        self._say("Opening your web browser to sign in...")
        try:
            opened = self._opener(auth_uri)
        except Exception:  # a broken browser launcher is "no browser", not a crash
            opened = False
        if not opened:
            self._say(
                "No browser could be opened. Open this address in a browser on this "
                f"computer:\n{auth_uri}"
            )
        waiter.join()
        return box.get("response")

    def close(self) -> None:
        self._inner.close()


def open_receiver(opener: BrowserOpener, stream: TextIO) -> OpeningReceiver:
    """A receiver listening on a free loopback port (msal imported here, not at start-up)."""
    from msal.oauth2cli import AuthCodeReceiver

    return OpeningReceiver(AuthCodeReceiver(port=0), opener, lambda text: say(stream, text))
