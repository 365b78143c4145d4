"""`mfconnector login` as a user runs it: a real process, a real $BROWSER, real sockets.

The sign-in service is the fake identity provider behind a loopback HTTPS server, reached
through a loopback CONNECT proxy given with --proxy (an HTTPS_PROXY in the environment
points nowhere and must be ignored). Python's webbrowser runs tests/support/browser_process.py as
the browser: it loads the sign-in page through the proxy and posts the form to the loopback
redirect. stdout must stay empty; the account and scopes are named on stderr.
"""

from __future__ import annotations

import os
import ssl
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.connect_proxy import ConnectProxy
from tests.support.idp_fake import FakeIdP
from tests.support.idp_https import serve_idp
from tests.support.loopback import LoopbackServer
from tests.support.tls_certs import make_ca_and_server

CLIENT_ID = "11111111-2222-3333-4444-555555555555"
REPO = Path(__file__).resolve().parents[2]
SUPPORT = REPO / "tests" / "support"
_DROPPED = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "DISPLAY", "WAYLAND_DISPLAY")


def _browser_command(directory: Path) -> Path:
    """An executable $BROWSER (webbrowser wants one path, then the URL as its argument)."""
    script = directory / "fake-browser"
    script.write_text(
        f"#!{sys.executable}\n"
        "import runpy\n"
        f"runpy.run_path({str(SUPPORT / 'browser_process.py')!r}, run_name='__main__')\n",
        encoding="utf-8",
    )
    script.chmod(0o700)
    return script


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="an executable script as $BROWSER")
def test_login_in_a_real_process_signs_in_through_the_browser(tmp_path: Path) -> None:
    idp = FakeIdP(client_id=CLIENT_ID)
    pki = make_ca_and_server(
        tmp_path / "pki", ["127.0.0.1", "login.microsoftonline.com", "graph.microsoft.com"]
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(pki.cert_file, pki.key_file)
    cache = tmp_path / "cache" / "token_cache.json"
    with LoopbackServer(tls=context) as server:
        serve_idp(server, idp)
        with ConnectProxy(("127.0.0.1", server.port)) as proxy:
            env = {k: v for k, v in os.environ.items() if k.upper() not in _DROPPED}
            env.update(
                {
                    "HOME": str(tmp_path),
                    "PYTHONPATH": str(REPO),
                    "BROWSER": str(_browser_command(tmp_path)),
                    "FAKE_BROWSER_PROXY": proxy.url,
                    "FAKE_BROWSER_CA": str(pki.ca_file),
                    "HTTPS_PROXY": "http://127.0.0.1:9",  # nothing listens: must be ignored
                    "DBUS_SESSION_BUS_ADDRESS": "disabled:",  # never a real keyring
                    "MFC_CLIENT_ID": CLIENT_ID,
                }
            )
            done = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "mfconnector",
                    "login",
                    "--proxy",
                    proxy.url,
                    "--ca-file",
                    str(pki.ca_file),
                    "--cache-path",
                    str(cache),
                    "--allow-plaintext-cache",
                ],
                env=env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=90,
                check=False,
            )
            tunnels = proxy.hosts()
    errors = done.stderr.decode("utf-8", "replace")
    assert done.returncode == 0, errors
    assert done.stdout == b""
    assert "Opening your web browser to sign in..." in errors
    assert "Signed in as adele.vance@contoso.example" in errors
    assert "Granted scopes: Files.Read, Mail.Read, MailboxSettings.Read, User.Read." in errors
    assert len(idp.token_requests("authorization_code")) == 1
    assert "login.microsoftonline.com:443" in tunnels
    assert '"RefreshToken"' in cache.read_text("utf-8")
    assert not any(secret in errors for secret in idp.secrets())
