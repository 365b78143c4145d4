"""The fake identity provider behind a real HTTPS server, for clients that make real requests.

``serve_idp`` routes the endpoints msal calls (OpenID configuration, instance discovery,
device code, token) and the sign-in page a browser loads (``/authorize``) to ``FakeIdP``.
The sign-in page answers the way Entra ID does with ``response_mode=form_post``: an HTML
form that posts the code and state to the redirect URI, which a browser submits at once.
"""

from __future__ import annotations

import html

from tests.support.idp_fake import FakeIdP
from tests.support.loopback import LoopbackServer, RecordedRequest, Reply

__all__ = ["IDP_ROUTES", "serve_idp"]

IDP_ROUTES = (
    ("GET", "/common/v2.0/.well-known/openid-configuration"),
    ("GET", "/common/discovery/instance"),
    ("POST", "/common/oauth2/v2.0/devicecode"),
    ("POST", "/common/oauth2/v2.0/token"),
)
AUTHORIZE = "/common/oauth2/v2.0/authorize"


def _url(request: RecordedRequest) -> str:
    host = (request.header("host") or "").split(":")[0]
    return f"https://{host}{request.target}"


def _endpoint(idp: FakeIdP, request: RecordedRequest) -> Reply:
    response = idp.answer_http(request.method, _url(request), request.body, dict(request.headers))
    headers = tuple(response.headers.items())
    return Reply(response.status_code, headers, response.text.encode("utf-8"))


def _sign_in_page(idp: FakeIdP, request: RecordedRequest) -> Reply:
    answer = idp.authorize(_url(request))
    fields = "".join(
        f'<input type="hidden" name="{html.escape(k)}" value="{html.escape(v)}"/>'
        for k, v in answer.form.items()
    )
    page = (
        '<html><body onload="document.forms[0].submit()">'
        f'<form method="POST" action="{html.escape(answer.redirect_uri)}">{fields}</form>'
        "</body></html>"
    )
    return Reply(200, (("Content-Type", "text/html; charset=utf-8"),), page.encode("utf-8"))


def serve_idp(server: LoopbackServer, idp: FakeIdP) -> None:
    """Answer the identity provider's endpoints on ``server`` from ``idp``."""
    for method, path in IDP_ROUTES:
        server.route(method, path, lambda request: _endpoint(idp, request))
    server.route("GET", AUTHORIZE, lambda request: _sign_in_page(idp, request))
