"""A fake Google OAuth token endpoint on 127.0.0.1, and a fake browser for the flow.

Only the seam is fake: the real ``google-auth-oauthlib`` flow runs its real loopback
redirect server; the "browser" follows the authorization URL's redirect with a code, and
the token endpoint checks the PKCE verifier against the challenge, as Google does
(RFC 7636 section 4.6).
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx

CODE = "fake-authorization-code"


class FakeGoogle:
    def __init__(self) -> None:
        self.challenge: str | None = None
        self.scopes = ""
        self.refreshes = 0
        self.refuse_refresh = False
        self.issued: list[str] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
                status, body = fake.token(form)
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def token_uri(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/token"

    def token(self, form: dict[str, str]) -> tuple[int, dict[str, Any]]:
        if form.get("grant_type") == "authorization_code":
            verifier = form.get("code_verifier", "")
            digest = hashlib.sha256(verifier.encode()).digest()
            expected = base64.urlsafe_b64encode(digest).decode().rstrip("=")
            if form.get("code") != CODE or expected != self.challenge:
                return 400, {"error": "invalid_grant"}
            return 200, self._tokens(refresh=True)
        if form.get("grant_type") == "refresh_token":
            if self.refuse_refresh or form.get("refresh_token") != "refresh-1":
                return 400, {
                    "error": "invalid_grant",
                    "error_description": "Token has been expired or revoked.",
                }
            self.refreshes += 1
            return 200, self._tokens(refresh=False)
        return 400, {"error": "unsupported_grant_type"}

    def _tokens(self, *, refresh: bool) -> dict[str, Any]:
        token = f"access-{len(self.issued) + 1}"
        self.issued.append(token)
        body: dict[str, Any] = {
            "access_token": token,
            "expires_in": 3599,
            "scope": self.scopes,
            "token_type": "Bearer",
        }
        if refresh:
            body["refresh_token"] = "refresh-1"
        return body

    def browser(self, line: str) -> None:
        """Shown the prompt with the authorization URL: sign in, follow the redirect."""
        if "http" not in line:
            return
        url = line[line.index("http") :].strip()
        query = {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}
        self.challenge = query.get("code_challenge")
        assert query.get("code_challenge_method") == "S256"
        self.scopes = query.get("scope", "")
        redirect = query["redirect_uri"]
        state = query["state"]

        def follow() -> None:
            httpx.get(f"{redirect}?{urlencode({'code': CODE, 'state': state})}", timeout=10)

        threading.Thread(target=follow, daemon=True).start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
