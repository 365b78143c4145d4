"""Google's JSON error answers, one exception the routes raise.

Google APIs answer an error with ``{"error": {"code", "message", "status", "errors": [{"domain",
"reason", "message"}]}}`` (the "Resolve errors" guide of the Gmail API and Google's AIP-193
error model): ``status`` is the canonical gRPC code name, ``errors`` the legacy per-error
list that older clients read ``reason`` from.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "GmailError",
    "bad_request",
    "insufficient_scope",
    "not_found",
    "rate_limited",
    "unauthenticated",
]

_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    405: "METHOD_NOT_ALLOWED",
    409: "ALREADY_EXISTS",
    413: "FAILED_PRECONDITION",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
}
AUTH_REALM = 'Bearer realm="https://accounts.google.com/"'


class GmailError(Exception):
    """An error answer: HTTP status, Google's reason and message, extra headers."""

    def __init__(
        self,
        status: int,
        reason: str,
        message: str,
        *,
        domain: str = "global",
        headers: dict[str, str] | None = None,
        extra: dict[str, Any] | None = None,
        inner: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.reason = reason
        self.message = message
        self.domain = domain
        self.headers = dict(headers or {})
        self.extra = dict(extra or {})
        self.inner = dict(inner or {})
        """Fields of the ``errors`` entry that differ from the top level (its own message,
        ``location``, ``locationType``)."""

    def body(self) -> dict[str, Any]:
        inner = {"message": self.message, "domain": self.domain, "reason": self.reason}
        inner.update(self.inner)
        error: dict[str, Any] = {
            "code": self.status,
            "message": self.message,
            "errors": [inner],
            "status": _STATUS.get(self.status, "UNKNOWN"),
        }
        error.update(self.extra)
        return {"error": error}


def bad_request(message: str, reason: str = "invalidArgument") -> GmailError:
    return GmailError(400, reason, message)


def not_found() -> GmailError:
    return GmailError(404, "notFound", "Requested entity was not found.")


def unauthenticated() -> GmailError:
    return GmailError(
        401,
        "authError",
        "Request had invalid authentication credentials. Expected OAuth 2 access token, "
        "login cookie or other valid authentication credential.",
        headers={"WWW-Authenticate": f'{AUTH_REALM}, error="invalid_token"'},
        inner={
            "message": "Invalid Credentials",
            "locationType": "header",
            "location": "Authorization",
        },
    )


def insufficient_scope(needed: tuple[str, ...]) -> GmailError:
    """403 with Google's ErrorInfo detail; the challenge names every scope that would do."""
    return GmailError(
        403,
        "insufficientPermissions",
        "Request had insufficient authentication scopes.",
        inner={"message": "Insufficient Permission"},
        headers={
            "WWW-Authenticate": (
                f'{AUTH_REALM}, error="insufficient_scope", scope="{" ".join(needed)}"'
            )
        },
        extra={
            "details": [
                {
                    "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                    "reason": "ACCESS_TOKEN_SCOPE_INSUFFICIENT",
                    "domain": "googleapis.com",
                    "metadata": {"service": "gmail.googleapis.com"},
                }
            ]
        },
    )


_RATE_MESSAGES = {
    (429, "rateLimitExceeded"): ("global", "Too many concurrent requests for user."),
    (403, "rateLimitExceeded"): ("usageLimits", "Rate Limit Exceeded"),
    (403, "userRateLimitExceeded"): ("usageLimits", "User Rate Limit Exceeded"),
}


def rate_limited(status: int, reason: str, retry_after: str | None) -> GmailError:
    domain, message = _RATE_MESSAGES.get((status, reason), ("usageLimits", "Rate Limit Exceeded"))
    headers = {"Retry-After": retry_after} if retry_after is not None else {}
    return GmailError(status, reason, message, domain=domain, headers=headers)
