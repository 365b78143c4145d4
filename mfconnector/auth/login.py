"""``mfconnector login``: sign a person in, in a browser or with a device code.

``login`` chooses the flow (``choose_method``: the browser where one can be opened, the
Windows account broker where installed, else a device code), runs it in a worker thread so
the main thread stays free for Ctrl-C (``_in_worker``), and ends by keeping one account in
the cache and naming it and the scopes granted. Every failure ends in a specific message; a
flow that was blocked points to the other one. Plain blocking code for a terminal.
"""

from __future__ import annotations

import base64
import binascii
import json
import sys
import threading
from collections.abc import Callable
from typing import Any, Literal, TextIO, TypeVar

from mfconnector.auth.browser import (
    BrowserOpener,
    can_open_browser,
    open_receiver,
    open_system_browser,
)
from mfconnector.auth.cache import TokenStore
from mfconnector.auth.config import AuthConfig
from mfconnector.auth.errors import auth_error_from_result, with_other_flow
from mfconnector.auth.sessions import OIDC_SCOPES, AppOnlySession, DelegatedSession, make_session
from mfconnector.auth.terminal import (
    EXIT_CANCELLED,
    EXIT_FAILED,
    EXIT_OK,
    duration,
    fail,
    printable,
    say,
)
from mfconnector.auth.translate import call_msal
from mfconnector.errors import AuthError

__all__ = [
    "LoginMethod",
    "cache_words",
    "choose_method",
    "forget_accounts",
    "login",
]

LoginMethod = Literal["auto", "browser", "device-code"]
T = TypeVar("T")

_RETRY_POLL = frozenset({"authorization_pending", "slow_down"})
_CONSUMER_TENANT = "9188040d-6c67-4c5b-b112-36a304b66dad"


def cache_words(store: TokenStore) -> str:
    if store.encrypted:
        return f"{store.location} (encrypted: {store.description})"
    return f"{store.location} (not encrypted: plaintext file readable only by you, mode 0600)"


def _home_account_id(result: dict[str, Any]) -> str | None:
    raw = result.get("client_info")
    if not isinstance(raw, str):
        return None
    try:
        info = json.loads(base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)))
    except (binascii.Error, ValueError):
        return None
    if isinstance(info, dict) and info.get("uid") and info.get("utid"):
        return f"{info['uid']}.{info['utid']}"
    return None


def forget_accounts(store: TokenStore, *, keep: str | None = None) -> list[str]:
    """Remove every account but ``keep`` and all its tokens. Returns the usernames removed.

    Works on the cache alone (msal's ``remove_account`` would first fetch the OpenID
    configuration over the network, which logout must not need).
    """
    cache = store.cache
    removed: list[str] = []
    homes = {a.get("home_account_id"): a for a in cache.snapshot("Account")}
    for credential_type in ("RefreshToken", "AccessToken", "IdToken"):
        for entry in cache.snapshot(credential_type):
            if entry.get("home_account_id") != keep:
                cache.modify(credential_type, entry)  # no new values: remove it
    for home, account in homes.items():
        if home != keep:
            cache.modify("Account", account)
            removed.append(str(account.get("username") or home))
    return removed


def _poll(app: Any, flow: dict[str, Any], stop: threading.Event) -> dict[str, Any] | None:
    """Poll the token endpoint until sign-in ends or ``stop`` is set (then None).

    ``exit_condition`` makes msal poll exactly once per call; the wait between polls is
    ``stop.wait(interval)``, so Ctrl-C or the timeout ends it at once instead of after
    msal's own one-second sleeps.
    """
    while not stop.is_set():
        result: dict[str, Any] = app.acquire_token_by_device_flow(
            flow, exit_condition=lambda _flow: True
        )
        if result.get("error") not in _RETRY_POLL:
            return result
        if stop.wait(max(1, int(flow.get("interval", 5)))):
            break
    return None


def _in_worker(
    work: Callable[[], T],
    stop: threading.Event,
    limit_seconds: float,
    on_stop: Callable[[], None] | None = None,
) -> tuple[T | None, bool]:
    """Run ``work`` in a thread; the main thread stays free for Ctrl-C. (result, timed_out).

    Ctrl-C, ``stop`` or the time limit end the wait: ``on_stop`` then makes ``work`` return
    (closing the loopback listener, or the device-code poll seeing ``stop``).
    """
    box: dict[str, Any] = {}
    done = threading.Event()
    timed_out = threading.Event()

    def worker() -> None:
        try:
            box["result"] = work()
        except BaseException as exc:
            box["error"] = exc
        finally:
            done.set()

    def expire() -> None:
        timed_out.set()
        stop.set()

    timer = threading.Timer(limit_seconds, expire)
    timer.daemon = True
    thread = threading.Thread(target=worker, name="mfconnector-login", daemon=True)
    timer.start()
    thread.start()
    try:
        while not done.wait(0.2):
            if stop.is_set():
                break
    except KeyboardInterrupt:
        stop.set()
        if on_stop is not None:
            on_stop()
        thread.join(2.0)  # a request in flight ends within msal's HTTP timeout
        raise
    finally:
        timer.cancel()
    if stop.is_set() and not done.is_set():
        if on_stop is not None:
            on_stop()
        thread.join(2.0)
        return None, timed_out.is_set()
    if "error" in box:
        raise box["error"]
    return box.get("result"), timed_out.is_set()


def choose_method(
    session: DelegatedSession, method: LoginMethod, browser: BrowserOpener | None
) -> tuple[LoginMethod, str | None]:
    """The flow ``auto`` means here, and a note for the user when it fell back."""
    if method != "auto":
        return method, None
    if session.broker or browser is not None or can_open_browser():
        return "browser", None
    return "device-code", "No web browser can be opened here: signing in with a device code."


def login(
    config: AuthConfig,
    *,
    method: LoginMethod = "auto",
    browser: BrowserOpener | None = None,
    http_client: Any = None,
    timeout_seconds: float | None = None,
    stream: TextIO | None = None,
    cancel: threading.Event | None = None,
) -> int:
    """Sign in: in a browser (the default where one can be opened) or with a device code.

    Everything said goes to ``stream`` (stderr), never stdout. ``browser`` opens the
    sign-in address (default: the system browser; tests pass their own). Ctrl-C (or setting
    ``cancel``) stops waiting and returns 130; ``timeout_seconds`` (default:
    ``config.limits.login_timeout_seconds``) returns 1. In app-only mode it checks the
    credential instead.
    """
    out = stream if stream is not None else sys.stderr
    stop = cancel if cancel is not None else threading.Event()
    if timeout_seconds is None:
        timeout_seconds = config.limits.login_timeout_seconds
    try:
        config.require_client_id()  # the first blocker first: before keyring or network
        session = make_session(config, http_client=http_client)
        if isinstance(session, AppOnlySession):
            return _check_app_only(session, out)
        chosen, note = choose_method(session, method, browser)
        if note:
            say(out, note)
        if chosen == "browser":
            outcome = _browser_login(session, out, stop, timeout_seconds, browser)
        else:
            outcome = _device_login(session, out, stop, timeout_seconds)
        if isinstance(outcome, int):
            return outcome
        return _finish_login(session, outcome, out)
    except KeyboardInterrupt:
        stop.set()
        say(out, "Sign-in cancelled.")
        return EXIT_CANCELLED
    except AuthError as exc:
        return fail(out, exc)


def _browser_login(
    session: DelegatedSession,
    out: TextIO,
    stop: threading.Event,
    timeout_seconds: float,
    browser: BrowserOpener | None,
) -> dict[str, Any] | int:
    config = session.config
    session.store.refresh()
    app = session.app
    limit = max(0.1, float(timeout_seconds))
    receiver = None if session.broker else open_receiver(browser or open_system_browser, out)
    extra: dict[str, Any] = {}
    if receiver is None:  # the Windows account broker shows its own window
        say(out, "Signing in with the Windows account broker...")
        extra["parent_window_handle"] = app.CONSOLE_WINDOW_HANDLE
    else:  # msal's loopback listener, with the browser opened by our opener
        extra["auth_code_receiver"] = receiver
        extra["port"] = receiver.get_port()

    def interact() -> dict[str, Any]:
        result: dict[str, Any] = app.acquire_token_interactive(
            session.scopes,
            prompt="select_account",
            timeout=int(limit) + 5,  # our own limit ends the wait first
            **extra,
        )
        return result

    def give_up() -> None:
        if receiver is not None:
            receiver.close()

    try:
        say(
            out,
            f"Waiting up to {duration(limit)} for sign-in in the browser; press Ctrl-C to cancel.",
        )
        try:
            result, timed_out = _in_worker(
                lambda: call_msal(config, interact), stop, limit, on_stop=give_up
            )
        except AuthError as exc:
            if exc.code != "browser_timeout":
                raise AuthError(
                    exc.message, hint=with_other_flow(exc, "browser"), code=exc.code
                ) from None
            result, timed_out = None, True
    finally:
        give_up()
    if result is None:
        if timed_out:
            say(out, f"error: sign-in in the browser did not finish within {duration(limit)}")
            say(
                out,
                "hint: run `mfconnector login` again, or `mfconnector login --device-code` to "
                "sign in on another device",
            )
            return EXIT_FAILED
        say(out, "Sign-in cancelled.")
        return EXIT_CANCELLED
    if "access_token" not in result:
        session.commit_quietly()
        error = auth_error_from_result(result, action="browser sign-in")
        raise AuthError(error.message, hint=with_other_flow(error, "browser"), code=error.code)
    return result


def _device_login(
    session: DelegatedSession, out: TextIO, stop: threading.Event, timeout_seconds: float
) -> dict[str, Any] | int:
    config = session.config
    store = session.store
    store.refresh()
    app = session.app
    flow: dict[str, Any] = call_msal(
        config, lambda: app.initiate_device_flow(scopes=session.scopes)
    )
    if "user_code" not in flow:
        error = auth_error_from_result(flow, action="starting sign-in")
        raise AuthError(error.message, hint=with_other_flow(error, "device-code"), code=error.code)
    flow["interval"] = max(1, int(flow.get("interval", 5)))
    limit = max(0.1, min(float(timeout_seconds), float(flow.get("expires_in", 900))))
    say(out, printable(str(flow.get("message") or "")))
    say(out, f"Waiting up to {duration(limit)} for sign-in to finish; press Ctrl-C to cancel.")

    result, timed_out = _in_worker(
        lambda: call_msal(config, lambda: _poll(app, flow, stop)), stop, limit
    )
    if result is None:
        if timed_out:
            say(out, f"error: sign-in did not finish within {duration(limit)}")
            say(out, "hint: run `mfconnector login` again and complete it in the browser")
            return EXIT_FAILED
        say(out, "Sign-in cancelled.")
        return EXIT_CANCELLED
    if "access_token" not in result:
        session.commit_quietly()
        error = auth_error_from_result(result, action="sign-in")
        raise AuthError(error.message, hint=with_other_flow(error, "device-code"), code=error.code)
    return result


def _finish_login(session: DelegatedSession, result: dict[str, Any], out: TextIO) -> int:
    """Keep one account, save the cache, and name the account and the granted scopes."""
    store = session.store
    home = _home_account_id(result)
    if home is not None:
        forget_accounts(store, keep=home)  # one account per cache
    store.commit()

    claims = result.get("id_token_claims") or {}
    who = claims.get("preferred_username") or claims.get("name") or "an unnamed account"
    tenant = claims.get("tid") or "unknown"
    kind = ", a personal Microsoft account" if tenant == _CONSUMER_TENANT else ""
    granted = [s for s in str(result.get("scope", "")).split() if s.lower() not in OIDC_SCOPES]
    short = {g.rsplit("/", 1)[-1].lower() for g in granted}
    missing = [s for s in session.scopes if s.lower() not in short]
    say(out, f"Token cache: {cache_words(store)}")
    if granted and missing:
        say(
            out,
            f"warning: not granted: {', '.join(missing)} — those tools will fail "
            "until an administrator grants consent",
        )
    say(
        out,
        f"Signed in as {who} (tenant {tenant}{kind}). "
        f"Granted scopes: {', '.join(sorted(granted)) or 'none reported'}.",
    )
    return EXIT_OK


def _check_app_only(session: AppOnlySession, out: TextIO) -> int:
    config = session.config
    say(out, "App-only mode needs no sign-in; checking the client credential...")
    session.token()
    say(
        out,
        f"Client credential works for tenant {config.tenant}; reading as {config.user} "
        f"({config.user_path}). Scope: {', '.join(config.scopes)}.",
    )
    return EXIT_OK
