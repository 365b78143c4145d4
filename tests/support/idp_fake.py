"""A fake Microsoft identity platform (Entra ID v2 endpoints) behind msal's ``http_client`` seam.

msal accepts any object with requests-like ``get(url, params=, headers=)`` and
``post(url, params=, data=, headers=)`` returning objects with ``status_code``, ``text`` and
``headers``. This one answers what msal asks a real tenant for, with the shapes Entra ID
uses (OpenID configuration, instance discovery, device code, token responses and AADSTS
error bodies, an unsigned but real-shaped ``id_token`` JWT and ``client_info``), so msal's own
code runs for real, offline. Every request is recorded; every secret it hands out is listed
in ``secrets()`` so tests can prove none of them reaches a terminal or a log.

Browser sign-in: ``authorize(url)`` is what the sign-in page does for a user who signs in
(or declines): it checks the authorization request (client, loopback redirect, PKCE S256,
``form_post``) and returns the form the browser then POSTs to the redirect URI. The token
endpoint redeems that code once, only with the matching ``code_verifier`` and redirect URI.
``answer_http`` serves the same endpoints to a real HTTPS server (``serve_idp``).
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import jwt
import requests
from cryptography import x509
from cryptography.hazmat.primitives import hashes

CONSUMER_TENANT = "9188040d-6c67-4c5b-b112-36a304b66dad"
GRAPH_APP_ID = "00000003-0000-0000-c000-000000000000"
DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"
JWT_BEARER = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
OBO_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer"


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64url_json(value: dict[str, Any]) -> str:
    return b64url(json.dumps(value, separators=(",", ":")).encode("utf-8"))


def unsigned_jwt(claims: dict[str, Any], *, kid: str = "fake-key-1") -> str:
    """header.payload.signature, base64url: msal decodes the payload and never verifies."""
    header = {"typ": "JWT", "alg": "RS256", "kid": kid}
    return f"{b64url_json(header)}.{b64url_json(claims)}.{b64url(secrets.token_bytes(64))}"


def aad_error(
    error: str, code: int, text: str, *, status: int = 400, suberror: str | None = None
) -> tuple[int, dict[str, Any]]:
    """An error body the way Entra ID writes it (trace and correlation ids included)."""
    trace, correlation = str(uuid.uuid4()), str(uuid.uuid4())
    stamp = time.strftime("%Y-%m-%d %H:%M:%SZ", time.gmtime())
    body: dict[str, Any] = {
        "error": error,
        "error_description": (
            f"AADSTS{code}: {text} Trace ID: {trace} Correlation ID: {correlation} "
            f"Timestamp: {stamp}"
        ),
        "error_codes": [code],
        "timestamp": stamp,
        "trace_id": trace,
        "correlation_id": correlation,
        "error_uri": f"https://login.microsoftonline.com/error?code={code}",
    }
    if suberror:
        body["suberror"] = suberror
    return status, body


def _errors() -> dict[str, tuple[int, dict[str, Any]]]:
    return {
        "authorization_pending": aad_error(
            "authorization_pending",
            70016,
            "OAuth 2.0 device flow error. Authorization is pending. Continue polling.",
        ),
        "expired_token": aad_error(
            "expired_token",
            70020,
            "The provided value for the input parameter 'device_code' is not valid. "
            "This device code has expired.",
        ),
        "authorization_declined": aad_error(
            "authorization_declined",
            70000,
            "The user has declined to authorize the app.",
        ),
        "refresh_expired": aad_error(
            "invalid_grant",
            700082,
            "The refresh token has expired due to inactivity. The token was issued on "
            "2024-01-02T03:04:05.0000000Z and was inactive for 90.00:00:00.",
        ),
        "grant_expired": aad_error(
            "invalid_grant",
            50173,
            "The provided grant has expired due to it being revoked, a fresh auth token is "
            "needed. The user might have changed or reset their password.",
        ),
        "mfa_required": aad_error(
            "interaction_required",
            50076,
            "Due to a configuration change made by your administrator, or because you moved "
            "to a new location, you must use multi-factor authentication to access "
            f"'{GRAPH_APP_ID}'.",
            suberror="basic_action",
        ),
        "consent_required": aad_error(
            "invalid_grant",
            65001,
            "The user or administrator has not consented to use the application with ID "
            "'11111111-2222-3333-4444-555555555555' named 'mfconnector'. Send an interactive "
            "authorization request for this user and resource.",
            suberror="consent_required",
        ),
        "public_client_disabled": aad_error(
            "invalid_client",
            7000218,
            "The request body must contain the following parameter: 'client_assertion' or "
            "'client_secret'.",
            status=401,
        ),
        "unknown_client": aad_error(
            "unauthorized_client",
            700016,
            "Application with identifier '11111111-2222-3333-4444-555555555555' was not "
            "found in the directory 'Contoso'. This can happen if the application has not "
            "been installed by the administrator of the tenant.",
        ),
        "personal_account_wrong_tenant": aad_error(
            "invalid_request",
            50020,
            "User account 'someone@outlook.com' from identity provider 'live.com' does not "
            "exist in tenant 'Contoso' and cannot access the application "
            "'11111111-2222-3333-4444-555555555555'(mfconnector) in that tenant.",
        ),
        "msa_only_app": aad_error(
            "invalid_request",
            9002331,
            "Application '11111111-2222-3333-4444-555555555555'(mfconnector) is configured "
            "for use by Microsoft Account users only. Please use the /consumers endpoint to "
            "serve this request.",
        ),
        "device_code_blocked": aad_error(
            "invalid_grant",
            530033,
            "Access has been blocked by conditional access policies. The authentication "
            "flows policy does not allow the device code flow.",
        ),
        "redirect_uri_mismatch": aad_error(
            "invalid_request",
            50011,
            "The redirect URI 'http://localhost:12345' specified in the request does not "
            "match the redirect URIs configured for the application.",
        ),
        "user_declined": aad_error(
            "access_denied",
            65004,
            "User declined to consent to access the app.",
        ),
        "bad_secret": aad_error(
            "invalid_client",
            7000215,
            "Invalid client secret provided. Ensure the secret being sent in the request is "
            "the client secret value, not the client secret ID.",
            status=401,
        ),
        "bad_assertion": aad_error(
            "invalid_client",
            700027,
            "Client assertion failed signature validation.",
            status=401,
        ),
        "unknown_certificate": aad_error(
            "invalid_client",
            700027,
            "Client assertion contains an invalid signature. [Reason - The key was not found.]",
            status=401,
        ),
    }


ERRORS = _errors()
"""Error answers seen from Entra ID, by name, for tests that inject them."""


@dataclass
class FakeResponse:
    status_code: int
    text: str
    headers: dict[str, str] = field(default_factory=dict)

    def raise_for_status(self) -> None:
        if self.status_code >= 400:
            raise requests.HTTPError(f"{self.status_code} from the fake identity provider")

    def json(self) -> Any:
        return json.loads(self.text)


@dataclass
class Recorded:
    method: str
    url: str
    host: str
    path: str
    params: dict[str, Any]
    data: dict[str, Any]
    headers: dict[str, str]
    thread: str

    @property
    def grant_type(self) -> str | None:
        value = self.data.get("grant_type")
        return str(value) if value is not None else None


@dataclass
class AuthorizeAnswer:
    """Where the sign-in page sends the browser next, and the form it posts there."""

    redirect_uri: str
    form: dict[str, str]


@dataclass
class FakeUser:
    username: str = "adele.vance@contoso.example"
    name: str = "Adele Vance"
    tid: str = "72f988bf-86f1-41af-91ab-2d7cd011db47"
    oid: str = field(default_factory=lambda: str(uuid.uuid4()))


class FakeIdP:
    """Answers msal's requests for one cloud host. Thread-safe; knobs are plain attributes.

    device_outcome: "success", "expired_token", "authorization_declined", "pending" (forever)
    pending_polls: how many ``authorization_pending`` answers come before the outcome
    refresh_error: a key of ERRORS answered to every refresh_token grant
    token_errors: ERRORS keys answered, in order, to the next token requests (any grant)
    devicecode_error: an ERRORS key answered to the devicecode request
    strict_rotation: a used refresh token is invalid afterwards (each one works once)
    client_certificate: the certificate uploaded to the app registration; a client
        assertion must be signed by its key and name it by thumbprint (``x5t`` SHA-1 or
        ``x5t#S256``), for this host's token endpoint, from the client id
    """

    def __init__(
        self,
        *,
        client_id: str,
        host: str = "login.microsoftonline.com",
        graph_host: str = "graph.microsoft.com",
        user: FakeUser | None = None,
        access_token_lifetime: int = 3600,
        device_outcome: str = "success",
        pending_polls: int = 0,
        interval: int = 1,
        granted_scopes: str | None = None,
        client_secret: str | None = None,
        strict_rotation: bool = True,
        client_certificate: x509.Certificate | None = None,
    ) -> None:
        self.client_id = client_id
        self.client_certificate = client_certificate
        self.client_assertion_headers: list[dict[str, Any]] = []
        """The JOSE header of every client assertion that passed the checks."""
        self.host = host
        self.graph_host = graph_host
        self.user = user or FakeUser()
        self.access_token_lifetime = access_token_lifetime
        self.device_outcome = device_outcome
        self.pending_polls = pending_polls
        self.interval = interval
        self.granted_scopes = granted_scopes
        self.client_secret = client_secret
        self.strict_rotation = strict_rotation
        self.refresh_error: str | None = None
        self.token_errors: list[str] = []
        self.devicecode_error: str | None = None
        self.obo_error: str | None = None
        """An ERRORS key answered to every on-behalf-of exchange."""
        self.unknown_tenants: set[str] = set()
        self.offline = False
        self.delay_seconds = 0.0
        self.requests: list[Recorded] = []
        self.access_tokens: list[str] = []
        self.refresh_tokens: list[str] = []
        self.id_tokens: list[str] = []
        self.assertions: list[str] = []
        self.device_codes: dict[str, list[Any]] = {}
        """device code -> [polls so far, scope asked for at the devicecode endpoint]"""
        self.authorize_error: str | None = None
        """An ERRORS key the sign-in page answers instead of a code (a declined consent)."""
        self.auth_codes: dict[str, dict[str, str]] = {}
        """authorization code -> the request it answered (challenge, redirect, scope, nonce)"""
        self.authorize_requests: list[dict[str, str]] = []
        self.issued_codes: list[str] = []
        self.valid_refresh_tokens: set[str] = set()
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()

    # --- what tests look at ----------------------------------------------------------------

    def secrets(self) -> list[str]:
        """Every token, device code and secret this fake handed out or was given."""
        with self._lock:
            values = [*self.access_tokens, *self.refresh_tokens, *self.id_tokens]
            values += self.assertions
            values += list(self.device_codes)
            values += self.issued_codes
        if self.client_secret:
            values.append(self.client_secret)
        return values

    def token_requests(self, grant_type: str | None = None) -> list[Recorded]:
        with self._lock:
            return [
                r
                for r in self.requests
                if r.path.endswith("/oauth2/v2.0/token")
                and (grant_type is None or r.grant_type == grant_type)
            ]

    def gets(self, suffix: str) -> list[Recorded]:
        with self._lock:
            return [r for r in self.requests if r.method == "GET" and r.path.endswith(suffix)]

    # --- the http_client seam ---------------------------------------------------------------

    def get(self, url: str, params: Any = None, headers: Any = None, **kwargs: Any) -> FakeResponse:
        return self._handle("GET", url, params, None, headers)

    def post(
        self, url: str, params: Any = None, data: Any = None, headers: Any = None, **kwargs: Any
    ) -> FakeResponse:
        return self._handle("POST", url, params, data, headers)

    def close(self) -> None:
        pass

    # --- the browser's side -------------------------------------------------------------------

    def authorize(self, url: str) -> AuthorizeAnswer:
        """The sign-in page: check the request, sign the user in, answer with a form_post."""
        parts = urlsplit(url)
        query = dict(parse_qsl(parts.query))
        with self._lock:
            self.authorize_requests.append(query)
        redirect = query.get("redirect_uri", "")
        if parts.hostname != self.host or not parts.path.endswith("/oauth2/v2.0/authorize"):
            raise AssertionError(f"not an authorize URL of {self.host}: {parts.path}")
        if query.get("client_id") != self.client_id:
            raise AssertionError("authorize: unknown client id")
        if not redirect.startswith("http://localhost:"):
            raise AssertionError(f"authorize: not a loopback redirect: {redirect}")
        if query.get("response_mode") != "form_post" or query.get("response_type") != "code":
            raise AssertionError("authorize: expected response_type=code, response_mode=form_post")
        if query.get("code_challenge_method") != "S256" or not query.get("code_challenge"):
            raise AssertionError("authorize: PKCE S256 is required")
        state = query.get("state", "")
        if self.authorize_error:
            _, body = ERRORS[self.authorize_error]
            return AuthorizeAnswer(
                redirect,
                {
                    "error": str(body["error"]),
                    "error_description": str(body["error_description"]),
                    "state": state,
                },
            )
        code = "0.AXkA" + secrets.token_urlsafe(120)
        with self._lock:
            self.issued_codes.append(code)
            self.auth_codes[code] = {
                "challenge": query["code_challenge"],
                "redirect_uri": redirect,
                "scope": query.get("scope", ""),
                "nonce": query.get("nonce", ""),
            }
        return AuthorizeAnswer(redirect, {"code": code, "state": state})

    def answer_http(self, method: str, url: str, body: bytes, headers: dict[str, str]) -> Any:
        """The endpoints as a real server sees them: form bodies, query strings."""
        query = dict(parse_qsl(urlsplit(url).query))
        data = dict(parse_qsl(body.decode("utf-8"))) if body else None
        if method == "GET":
            return self.get(url, params=query, headers=headers)
        return self.post(url, params=query, data=data, headers=headers)

    # --- routing ------------------------------------------------------------------------------

    def _handle(self, method: str, url: str, params: Any, data: Any, headers: Any) -> FakeResponse:
        parts = urlsplit(url)
        record = Recorded(
            method=method,
            url=url,
            host=parts.hostname or "",
            path=parts.path,
            params=dict(params or {}),
            data=dict(data) if isinstance(data, dict) else {},
            headers=dict(headers or {}),
            thread=threading.current_thread().name,
        )
        with self._lock:
            self.requests.append(record)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if self.delay_seconds:
                time.sleep(self.delay_seconds)
            if self.offline or record.host != self.host:
                raise requests.ConnectionError(f"cannot connect to {record.host}")
            status, body = self._route(record)
        finally:
            with self._lock:
                self.in_flight -= 1
        return FakeResponse(
            status,
            json.dumps(body),
            {"Content-Type": "application/json; charset=utf-8", "Cache-Control": "no-store"},
        )

    def _route(self, r: Recorded) -> tuple[int, dict[str, Any]]:
        segments = [s for s in r.path.split("/") if s]
        tenant = segments[0] if segments else ""
        if r.method == "GET" and r.path.endswith("/v2.0/.well-known/openid-configuration"):
            return self._openid_configuration(tenant)
        if r.method == "GET" and r.path == "/common/discovery/instance":
            return 200, self._instance_discovery()
        if r.method == "POST" and r.path.endswith("/oauth2/v2.0/devicecode"):
            return self._devicecode(r)
        if r.method == "POST" and r.path.endswith("/oauth2/v2.0/token"):
            with self._lock:
                injected = self.token_errors.pop(0) if self.token_errors else None
            if injected:
                return ERRORS[injected]
            grant = r.grant_type
            if grant == DEVICE_GRANT:
                return self._device_token(r)
            if grant == "refresh_token":
                return self._refresh(r)
            if grant == "client_credentials":
                return self._client_credentials(r, tenant)
            if grant == "authorization_code":
                return self._code_token(r)
            if grant == OBO_GRANT and r.data.get("requested_token_use") == "on_behalf_of":
                return self._on_behalf_of(r)
            return aad_error(
                "unsupported_grant_type", 70003, "The app requested an unsupported grant type."
            )
        return 404, {"error": "not_found"}

    def _openid_configuration(self, tenant: str) -> tuple[int, dict[str, Any]]:
        if tenant in self.unknown_tenants:
            return aad_error(
                "invalid_tenant",
                90002,
                f"Tenant '{tenant}' not found. Check to make sure you have the correct tenant "
                "ID and are signing into the correct cloud.",
            )
        base = f"https://{self.host}/{tenant}"
        issuer_tenant = (
            "{tenantid}"
            if tenant in ("common", "organizations")
            else (CONSUMER_TENANT if tenant == "consumers" else tenant)
        )
        return 200, {
            "token_endpoint": f"{base}/oauth2/v2.0/token",
            "token_endpoint_auth_methods_supported": [
                "client_secret_post",
                "private_key_jwt",
                "client_secret_basic",
            ],
            "jwks_uri": f"{base}/discovery/v2.0/keys",
            "response_modes_supported": ["query", "fragment", "form_post"],
            "subject_types_supported": ["pairwise"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "response_types_supported": ["code", "id_token", "code id_token", "id_token token"],
            "scopes_supported": ["openid", "profile", "email", "offline_access"],
            "issuer": f"https://{self.host}/{issuer_tenant}/v2.0",
            "request_uri_parameter_supported": False,
            "userinfo_endpoint": f"https://{self.graph_host}/oidc/userinfo",
            "authorization_endpoint": f"{base}/oauth2/v2.0/authorize",
            "device_authorization_endpoint": f"{base}/oauth2/v2.0/devicecode",
            "http_logout_supported": True,
            "frontchannel_logout_supported": True,
            "end_session_endpoint": f"{base}/oauth2/v2.0/logout",
            "claims_supported": [
                "sub",
                "iss",
                "cloud_instance_name",
                "cloud_instance_host_name",
                "cloud_graph_host_name",
                "msgraph_host",
                "aud",
                "exp",
                "iat",
                "auth_time",
                "acr",
                "nonce",
                "preferred_username",
                "name",
                "tid",
                "ver",
                "at_hash",
                "c_hash",
                "email",
            ],
            "kerberos_endpoint": f"{base}/kerberos",
            "tenant_region_scope": None,
            "cloud_instance_name": self.host.removeprefix("login."),
            "cloud_graph_host_name": "graph.windows.net",
            "msgraph_host": self.graph_host,
            "rbac_url": "https://pas.windows.net",
        }

    def _instance_discovery(self) -> dict[str, Any]:
        return {
            "tenant_discovery_endpoint": (
                f"https://{self.host}/common/v2.0/.well-known/openid-configuration"
            ),
            "api-version": "1.1",
            "metadata": [
                {
                    "preferred_network": "login.microsoftonline.com",
                    "preferred_cache": "login.windows.net",
                    "aliases": [
                        "login.microsoftonline.com",
                        "login.windows.net",
                        "login.microsoft.com",
                        "sts.windows.net",
                    ],
                },
                {
                    "preferred_network": "login.partner.microsoftonline.cn",
                    "preferred_cache": "login.partner.microsoftonline.cn",
                    "aliases": ["login.partner.microsoftonline.cn", "login.chinacloudapi.cn"],
                },
                {
                    "preferred_network": "login.microsoftonline.us",
                    "preferred_cache": "login.microsoftonline.us",
                    "aliases": ["login.microsoftonline.us", "login.usgovcloudapi.net"],
                },
            ],
        }

    def _devicecode(self, r: Recorded) -> tuple[int, dict[str, Any]]:
        if self.devicecode_error:
            return ERRORS[self.devicecode_error]
        if r.data.get("client_id") != self.client_id:
            return ERRORS["unknown_client"]
        user_code = "".join(secrets.choice("ABCDEFGHJKLMNPQRSTUVWXYZ23456789") for _ in range(9))
        device_code = "DAQABIQEAAADW6jl31mB3T7ugrWTT8pFe" + secrets.token_urlsafe(96)
        with self._lock:
            self.device_codes[device_code] = [0, str(r.data.get("scope", ""))]
        return 200, {
            "user_code": user_code,
            "device_code": device_code,
            "verification_uri": "https://microsoft.com/devicelogin",
            "expires_in": 900,
            "interval": self.interval,
            "message": (
                "To sign in, use a web browser to open the page https://microsoft.com/devicelogin "
                f"and enter the code {user_code} to authenticate."
            ),
        }

    def _device_token(self, r: Recorded) -> tuple[int, dict[str, Any]]:
        code = str(r.data.get("device_code"))
        with self._lock:
            if code not in self.device_codes:
                return ERRORS["expired_token"]
            self.device_codes[code][0] += 1
            polls, scope = self.device_codes[code]
        if self.device_outcome == "pending" or polls <= self.pending_polls:
            return ERRORS["authorization_pending"]
        if self.device_outcome != "success":
            return ERRORS[self.device_outcome]
        return 200, self._user_tokens(scope)

    def _code_token(self, r: Recorded) -> tuple[int, dict[str, Any]]:
        """Redeem an authorization code once, with the PKCE verifier and the same redirect."""
        code = str(r.data.get("code"))
        with self._lock:
            request = self.auth_codes.pop(code, None)
        if request is None:
            return aad_error("invalid_grant", 70008, "The provided authorization code expired.")
        verifier = str(r.data.get("code_verifier", ""))
        challenge = b64url(hashlib.sha256(verifier.encode("ascii")).digest())
        if challenge != request["challenge"]:
            return aad_error(
                "invalid_grant", 501481, "The Code_Verifier does not match the code_challenge."
            )
        if r.data.get("redirect_uri") != request["redirect_uri"]:
            return ERRORS["redirect_uri_mismatch"]
        return 200, self._user_tokens(request["scope"], nonce=request["nonce"])

    def _refresh(self, r: Recorded) -> tuple[int, dict[str, Any]]:
        if self.refresh_error:
            return ERRORS[self.refresh_error]
        token = str(r.data.get("refresh_token"))
        with self._lock:
            if token not in self.valid_refresh_tokens:
                return aad_error(
                    "invalid_grant",
                    70000,
                    "Provided grant is invalid or malformed.",
                )
            if self.strict_rotation:
                self.valid_refresh_tokens.discard(token)
        return 200, self._user_tokens(str(r.data.get("scope", "")))

    def _client_credentials(self, r: Recorded, tenant: str) -> tuple[int, dict[str, Any]]:
        if r.data.get("client_id") != self.client_id:
            return ERRORS["unknown_client"]
        scope = str(r.data.get("scope", ""))
        if scope != f"https://{self.graph_host}/.default":
            return aad_error(
                "invalid_scope",
                1002012,
                f"The provided value for scope {scope} "
                "is not valid. Client credential flows must have a scope value "
                "with /.default suffixed to the resource identifier.",
            )
        if "client_secret" in r.data:
            if r.data["client_secret"] != self.client_secret:
                return ERRORS["bad_secret"]
        elif r.data.get("client_assertion_type") != JWT_BEARER:
            return ERRORS["public_client_disabled"]
        else:
            if self.client_certificate is not None:
                refused = self._check_client_assertion(r)
                if refused:
                    return ERRORS[refused]
            assertion = r.data.get("client_assertion", b"")
            if isinstance(assertion, bytes):
                assertion = assertion.decode("ascii")
            with self._lock:
                self.assertions.append(str(assertion))
        now = int(time.time())
        token = unsigned_jwt(
            {
                "aud": f"https://{self.graph_host}",
                "iss": f"https://sts.windows.net/{tenant}/",
                "iat": now,
                "nbf": now,
                "exp": now + self.access_token_lifetime,
                "appid": self.client_id,
                "roles": ["Mail.Read", "Files.Read.All", "User.Read.All"],
                "tid": tenant,
                "ver": "1.0",
                "uti": secrets.token_urlsafe(16),
            }
        )
        with self._lock:
            self.access_tokens.append(token)
        return 200, {
            "token_type": "Bearer",
            "expires_in": self.access_token_lifetime,
            "ext_expires_in": self.access_token_lifetime,
            "access_token": token,
        }

    def _on_behalf_of(self, r: Recorded) -> tuple[int, dict[str, Any]]:
        """The OBO grant: a confidential client trades the user's token for a Graph one."""
        if r.data.get("client_id") != self.client_id:
            return ERRORS["unknown_client"]
        if "client_assertion" in r.data or self.client_secret is None:
            refused = self._check_client_assertion(r)
            if refused:
                return ERRORS[refused]
        elif r.data.get("client_secret") != self.client_secret:
            return ERRORS["bad_secret"]
        assertion = str(r.data.get("assertion", ""))
        with self._lock:
            self.assertions.append(assertion)
            injected = self.obo_error
        if injected:
            return ERRORS[injected]
        try:
            claims = json.loads(base64.urlsafe_b64decode(assertion.split(".")[1] + "=="))
        except (ValueError, IndexError):
            return aad_error("invalid_grant", 50027, "JWT token is invalid or malformed.")
        user = FakeUser(
            oid=str(claims.get("oid")),
            tid=str(claims.get("tid")),
            username=str(claims.get("preferred_username", self.user.username)),
        )
        return 200, self._user_tokens(str(r.data.get("scope", "")), user=user)

    def _check_client_assertion(self, r: Recorded) -> str | None:
        """None when the client assertion proves the registered certificate's key, else the
        ERRORS key Entra would answer."""
        cert = self.client_certificate
        raw = r.data.get("client_assertion", "")
        assertion = raw.decode("ascii") if isinstance(raw, bytes) else str(raw)
        if cert is None or r.data.get("client_assertion_type") != JWT_BEARER or not assertion:
            return "public_client_disabled"
        try:
            header = jwt.get_unverified_header(assertion)
        except jwt.InvalidTokenError:
            return "bad_assertion"
        named = {  # msal pads the base64url value; JOSE leaves padding out: both are read
            name: str(header[name]).rstrip("=") for name in ("x5t#S256", "x5t") if name in header
        }
        registered = {
            "x5t#S256": b64url(cert.fingerprint(hashes.SHA256())),
            "x5t": b64url(cert.fingerprint(hashes.SHA1())),
        }
        if not named or any(registered[name] != value for name, value in named.items()):
            return "unknown_certificate"
        tenant = next((s for s in r.path.split("/") if s), "")
        try:
            claims = jwt.decode(
                assertion,
                cert.public_key(),  # type: ignore[arg-type]
                algorithms=["RS256", "PS256"],
                audience=f"https://{self.host}/{tenant}/oauth2/v2.0/token",
                issuer=self.client_id,
                options={"require": ["exp", "aud", "iss", "sub", "jti"]},
            )
        except jwt.InvalidTokenError:
            return "bad_assertion"
        if claims.get("sub") != self.client_id:
            return "bad_assertion"
        with self._lock:
            self.client_assertion_headers.append(header)
        return None

    def _user_tokens(
        self, requested_scope: str, *, nonce: str = "", user: FakeUser | None = None
    ) -> dict[str, Any]:
        now = int(time.time())
        user = user or self.user
        api_scopes = [
            s for s in requested_scope.split() if s not in ("openid", "profile", "offline_access")
        ]
        granted = self.granted_scopes or " ".join(
            [*sorted(api_scopes), "profile", "openid", "email"]
        )
        access_token = unsigned_jwt(
            {
                "aud": GRAPH_APP_ID,
                "iss": f"https://sts.windows.net/{user.tid}/",
                "iat": now,
                "nbf": now,
                "exp": now + self.access_token_lifetime,
                "app_displayname": "mfconnector",
                "appid": self.client_id,
                "name": user.name,
                "oid": user.oid,
                "scp": " ".join(sorted(api_scopes)),
                "tid": user.tid,
                "unique_name": user.username,
                "upn": user.username,
                "ver": "1.0",
                "xms_cc": ["CP1"],
                "uti": secrets.token_urlsafe(16),
            }
        )
        refresh_token = "1.AXkAv4j5cvGGr0GRqy180BHbR" + secrets.token_urlsafe(180)
        id_token = unsigned_jwt(
            {
                "aud": self.client_id,
                "iss": f"https://{self.host}/{user.tid}/v2.0",
                "iat": now,
                "nbf": now,
                "exp": now + 3600,
                "name": user.name,
                "oid": user.oid,
                "preferred_username": user.username,
                "rh": "0.AXkA" + secrets.token_urlsafe(20),
                "sub": secrets.token_urlsafe(32),
                "tid": user.tid,
                "uti": secrets.token_urlsafe(16),
                "ver": "2.0",
                **({"nonce": nonce} if nonce else {}),
            }
        )
        with self._lock:
            self.access_tokens.append(access_token)
            self.refresh_tokens.append(refresh_token)
            self.id_tokens.append(id_token)
            self.valid_refresh_tokens.add(refresh_token)
        return {
            "token_type": "Bearer",
            "scope": granted,
            "expires_in": self.access_token_lifetime,
            "ext_expires_in": self.access_token_lifetime,
            "access_token": access_token,
            "refresh_token": refresh_token,
            "id_token": id_token,
            "client_info": b64url_json({"uid": user.oid, "utid": user.tid}),
        }
