"""When a 401 or 403 is worth one forced token refresh, and naming a deadline spent on sign-in.

Token-shaped refusals (a claims challenge, ``invalid_token``, code InvalidAuthenticationToken,
or a 401 with no JSON code at all) get one ``get_token(force_refresh=True, claims=...)`` and
one retry; anything else (MailboxNotEnabledForRESTAPI, a plain 403) never does. While a call
waits on the token provider, ``WAITING_FOR_TOKEN`` is set, so a deadline that passes there
is reported as a slow sign-in service rather than a slow Graph.
"""

from __future__ import annotations

import contextvars

from mfconnector.graph.errors import bearer_challenge, decode_claims, graph_error_from_response
from mfconnector.graph.retry import Answer
from mfconnector.limits import Limits

__all__ = ["WAITING_FOR_TOKEN", "refresh_claims"]

WAITING_FOR_TOKEN: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "mfconnector_waiting_for_token", default=False
)
"""Set while a call waits on the token provider (each trio task has its own copy)."""


def refresh_claims(answer: Answer, limits: Limits) -> tuple[bool, str | None]:
    """Whether a 401/403 is about the token (so one forced refresh may help), and claims."""
    if answer.status not in (401, 403):
        return False, None
    challenge = bearer_challenge(answer.headers, limits=limits)
    if challenge.get("error") == "insufficient_claims":
        return True, decode_claims(challenge.get("claims"), limits=limits)
    if answer.status == 403:
        return False, None
    if challenge.get("error") == "invalid_token":
        return True, None
    code = graph_error_from_response(answer.status, answer.headers, answer.body, limits=limits).code
    return code is None or code.lower() == "invalidauthenticationtoken", None
