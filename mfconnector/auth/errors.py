"""Turn Microsoft Entra ID error answers into ``AuthError``s a person can act on.

msal returns failures as dicts (``error``, ``error_description``, ``error_codes``), and the
description starts with an ``AADSTSnnnnn`` code. We map by that code first (from
``error_codes`` or the description), then by the OAuth ``error``. Each message says what
happened and which command or setting fixes it; the AADSTS code is appended for support.
The raw description is untrusted text that may name the user or echo input, so it is used
only for an unknown code, cut to its first sentence and bounded.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mfconnector.errors import LOGIN_HINT, AuthError

__all__ = [
    "LOGIN_HINT",
    "aadsts_codes",
    "auth_error_from_result",
    "network_error",
    "not_signed_in",
    "with_other_flow",
]

LOGIN = "run `mfconnector login`"
_AADSTS = re.compile(r"AADSTS(\d{4,9})")


@dataclass(frozen=True, slots=True)
class _Rule:
    code: str
    message: str
    hint: str | None


_EXPIRED = _Rule("signin_expired", f"sign-in expired: {LOGIN}", LOGIN_HINT)
_PERSONAL = _Rule(
    "wrong_tenant",
    "this account cannot sign in through the configured tenant: personal Microsoft accounts "
    "need --tenant consumers (or common)",
    "work or school accounts need their organization's tenant (or organizations/common); "
    "set --tenant / MFC_TENANT and run `mfconnector login`",
)
_DECLINED = _Rule(
    "declined",
    "sign-in was declined: the permissions were not granted",
    "run `mfconnector login` again and accept the requested permissions",
)

_BY_AADSTS: Mapping[int, _Rule] = {
    # Consent.
    65001: _Rule(
        "consent_required",
        "consent required: the app has not been granted the permissions it asks for; " + LOGIN,
        "run `mfconnector login` and accept the permissions; if your organization blocks "
        "user consent, an administrator must grant it (docs/AUTH.md)",
    ),
    90094: _Rule(
        "admin_consent_required",
        "an administrator must grant consent for this app before you can sign in",
        "ask an admin to grant admin consent for the app's permissions (docs/AUTH.md)",
    ),
    65004: _DECLINED,
    # The refresh token or session can no longer be used: a person must sign in again.
    700082: _EXPIRED,  # refresh token expired after inactivity
    700081: _EXPIRED,  # refresh token reached its maximum lifetime
    700084: _EXPIRED,
    50173: _EXPIRED,  # grant expired (password changed, sessions revoked)
    70043: _EXPIRED,  # sign-in frequency policy
    50133: _EXPIRED,  # password expired
    50078: _EXPIRED,  # MFA is now required
    50076: _EXPIRED,
    50079: _EXPIRED,
    50058: _EXPIRED,
    # Tenant versus account type.
    50020: _PERSONAL,
    500200: _PERSONAL,
    9002331: _Rule(
        "wrong_tenant",
        "this app registration accepts personal Microsoft accounts only: use --tenant consumers",
        "set --tenant consumers (MFC_TENANT=consumers) and run `mfconnector login`",
    ),
    9002346: _Rule(
        "wrong_tenant",
        "this app registration accepts personal Microsoft accounts only: use --tenant consumers",
        "set --tenant consumers (MFC_TENANT=consumers) and run `mfconnector login`",
    ),
    50194: _Rule(
        "wrong_tenant",
        "this app registration is single-tenant: the common endpoint cannot be used",
        "pass --tenant <your tenant id> (MFC_TENANT), or make the registration multi-tenant",
    ),
    90002: _Rule(
        "tenant_not_found",
        "the configured tenant does not exist",
        "check --tenant / MFC_TENANT (tenant id or domain) and --cloud",
    ),
    900023: _Rule(
        "tenant_not_found",
        "the configured tenant is not a valid tenant id or domain",
        "check --tenant / MFC_TENANT",
    ),
    # Device code flow.
    70020: _Rule(
        "device_code_expired",
        "the sign-in code expired before sign-in was completed",
        "run `mfconnector login` again and enter the code within its lifetime",
    ),
    70000: _DECLINED,  # only for authorization_declined; see _rule_for
    # The app registration.
    700016: _Rule(
        "unknown_client",
        "unknown client id: no app with this id exists in the tenant or cloud",
        "check --client-id / MFC_CLIENT_ID, --tenant and --cloud against the app registration",
    ),
    700038: _Rule(
        "unknown_client",
        "the client id is not a valid application id",
        "check --client-id / MFC_CLIENT_ID",
    ),
    7000218: _Rule(
        "public_client_disabled",
        "the app registration does not allow device-code sign-in: enable 'Allow public client "
        "flows' in the app registration",
        "Azure portal > App registrations > your app > Authentication > Advanced settings > "
        "Allow public client flows: Yes",
    ),
    # App-only credentials.
    7000215: _Rule(
        "invalid_client_credential",
        "the client secret is wrong",
        "use the secret's Value (not its ID) from Certificates & secrets in MFC_CLIENT_SECRET",
    ),
    7000222: _Rule(
        "invalid_client_credential",
        "the client secret has expired",
        "create a new secret under Certificates & secrets and update MFC_CLIENT_SECRET",
    ),
    700027: _Rule(
        "invalid_client_credential",
        "the certificate was not accepted (unknown thumbprint or signature)",
        "upload the certificate to the app registration and check --client-cert-thumbprint",
    ),
    # A flow the organization or the app registration does not allow.
    530033: _Rule(
        "device_code_blocked",
        "your organization's policy blocks sign-in with a device code",
        None,
    ),
    50199: _Rule(
        "device_code_blocked",
        "sign-in with a device code needs a confirmation this terminal cannot show",
        None,
    ),
    50011: _Rule(
        "redirect_uri",
        "the app registration has no http://localhost redirect URI for browser sign-in",
        "Azure portal > App registrations > your app > Authentication > Add a platform > "
        "Mobile and desktop applications > http://localhost",
    ),
    # Policy and assignment.
    53003: _Rule(
        "conditional_access",
        "sign-in was blocked by a Conditional Access policy",
        "ask your administrator which policy applies (device, location or app restrictions)",
    ),
    50105: _Rule(
        "not_assigned",
        "your account is not assigned to this application",
        "ask an administrator to assign you to the app (Enterprise applications > Users)",
    ),
    70011: _Rule(
        "invalid_scope",
        "the sign-in service rejected the requested permissions",
        "check --cloud (scopes belong to that cloud's Graph) and the API permissions "
        "of the app registration",
    ),
}

_BY_ERROR: Mapping[str, _Rule] = {
    "invalid_grant": _EXPIRED,
    "interaction_required": _EXPIRED,
    "login_required": _EXPIRED,
    "consent_required": _BY_AADSTS[65001],
    "expired_token": _BY_AADSTS[70020],
    "authorization_declined": _DECLINED,
    "access_denied": _DECLINED,
    "unauthorized_client": _BY_AADSTS[700016],
    "invalid_scope": _BY_AADSTS[70011],
    "temporarily_unavailable": _Rule(
        "service_unavailable",
        "the sign-in service is temporarily unavailable",
        "retry in a minute",
    ),
}


def aadsts_codes(result: Mapping[str, Any]) -> list[int]:
    """The AADSTS numbers of an error answer: ``error_codes`` first, then the description."""
    codes: list[int] = []
    raw_codes = result.get("error_codes")
    if isinstance(raw_codes, list):
        codes.extend(c for c in raw_codes if isinstance(c, int) and not isinstance(c, bool))
    description = result.get("error_description")
    if isinstance(description, str):
        codes.extend(int(m) for m in _AADSTS.findall(description[:2000]))
    return list(dict.fromkeys(codes))


def _rule_for(error: str, codes: list[int]) -> _Rule | None:
    for code in codes:
        if code == 70000 and error == "invalid_grant":
            return _EXPIRED  # AADSTS70000 also means "the grant is no longer valid"
        rule = _BY_AADSTS.get(code)
        if rule is not None:
            return rule
    return _BY_ERROR.get(error)


def _first_sentence(description: str) -> str:
    text = description.split("\r\n")[0].split("\n")[0]
    text = re.split(r"\s+(?:Trace ID|Correlation ID|Timestamp):", text)[0]
    text = "".join(ch if ch.isprintable() else " " for ch in text).strip()
    return text[:200] + ("…" if len(text) > 200 else "")


def auth_error_from_result(result: Mapping[str, Any], *, action: str = "sign-in") -> AuthError:
    """An ``AuthError`` for an msal error dict. ``action`` names what failed, for unknown codes."""
    error = str(result.get("error") or "unknown_error")[:80]
    codes = aadsts_codes(result)
    suffix = f" (AADSTS{codes[0]})" if codes else f" ({error})"
    rule = _rule_for(error, codes)
    if rule is not None:
        return AuthError(rule.message + suffix, hint=rule.hint, code=rule.code)
    description = result.get("error_description")
    detail = _first_sentence(description) if isinstance(description, str) else ""
    message = f"{action} failed: {error}" + (f": {detail}" if detail else "")
    if codes and f"AADSTS{codes[0]}" not in message:
        message += suffix
    return AuthError(
        message,
        hint="see docs/AUTH.md; if it persists, run `mfconnector login` again",
        code="signin_failed",
    )


_BROWSER_INSTEAD = "run `mfconnector login` without --device-code to sign in in a web browser"
_DEVICE_INSTEAD = "or sign in on another device: `mfconnector login --device-code`"
_DEVICE_BLOCKED = frozenset({"device_code_blocked", "conditional_access", "public_client_disabled"})
_BROWSER_BLOCKED = frozenset({"redirect_uri", "conditional_access", "browser_timeout"})


def with_other_flow(error: AuthError, flow: str) -> str | None:
    """The error's hint, plus the other sign-in flow where that one may get through.

    Conditional Access often blocks the device-code flow but not the browser (and a missing
    redirect URI or a browser that never comes up blocks the browser but not a device code).
    """
    hint = error.hint
    if flow == "device-code" and error.code in _DEVICE_BLOCKED:
        extra = _BROWSER_INSTEAD
    elif flow == "browser" and error.code in _BROWSER_BLOCKED:
        extra = _DEVICE_INSTEAD
    else:
        return hint
    return f"{hint}; {extra}" if hint else extra[0].upper() + extra[1:]


def not_signed_in() -> AuthError:
    return AuthError(f"not signed in: {LOGIN}", hint=LOGIN_HINT, code="not_signed_in")


def network_error(host: str, *, timed_out: bool) -> AuthError:
    """The sign-in service could not be reached; nothing about the account is known to be wrong."""
    what = "did not answer in time" if timed_out else "could not be reached"
    return AuthError(
        f"the sign-in service ({host}) {what}",
        hint="check the network connection or proxy, then retry; your sign-in is kept",
        code="timeout" if timed_out else "network",
    )
