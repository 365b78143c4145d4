"""Keep secrets out of msal's own log records.

msal masks tokens in its cache-event debug log but not ``code``/``device_code``, and a
device code or an authorization code can be redeemed for the user's tokens while sign-in is
in progress. ``guard_msal_logs`` attaches one filter to every msal logger that scrubs
secret-valued fields, whatever level the user asked for.
"""

from __future__ import annotations

import logging
import re

__all__ = ["guard_msal_logs", "redact_secret_fields"]

_SECRET_FIELD = re.compile(
    r"""(["']?\b(?:code|device_code|refresh_token|access_token|id_token|client_secret|"""
    r"""client_assertion|assertion|password|secret|code_verifier)\b["']?\s*[:=]\s*b?)"""
    r"""(["'])[^"']*["']"""
)


def redact_secret_fields(message: str) -> str:
    """``'code': 'abc'`` → ``'code': '********'`` for every secret-named field."""
    return _SECRET_FIELD.sub(r"\1\2********\2", message)


class _RedactSecrets(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a broken record is the logging system's problem, not ours
            return True
        scrubbed = redact_secret_fields(message)
        if scrubbed != message:
            record.msg, record.args = scrubbed, None
        return True


_REDACTOR = _RedactSecrets()


def guard_msal_logs() -> None:
    """Attach the redacting filter to every msal logger (idempotent; after ``import msal``)."""
    names = [
        name
        for name in list(logging.root.manager.loggerDict)
        if name == "msal" or name.startswith(("msal.", "msal_extensions"))
    ]
    for name in names:
        logger = logging.getLogger(name)
        if _REDACTOR not in logger.filters:
            logger.addFilter(_REDACTOR)
