"""Certificate verification with the operating system's trust store, and naming its failures.

Corporate networks that inspect TLS re-sign every site with their own CA, which IT installs
in the operating system's store (Windows certificate store, macOS Keychain, the Linux CA
bundle), not in Python's ``certifi`` bundle. ``truststore`` verifies against that store on
every platform, so both HTTP stacks use one ``truststore.SSLContext``; ``--ca-file`` adds PEM
certificates on top (a CA the OS store lacks, for example in a minimal container).

When verification fails, the libraries bury the reason several exceptions deep;
``certificate_problem`` digs out the ``ssl.SSLCertVerificationError`` and returns its reason
("self-signed certificate in certificate chain", "certificate has expired", a host name
mismatch), which the error then names. ``ssl`` is imported here, never at start-up.
"""

from __future__ import annotations

import functools
import ssl
from pathlib import Path

__all__ = ["TLS_HINT", "certificate_problem", "verifying_context"]

TLS_HINT = (
    "if a proxy or security product inspects TLS on this network, install its CA certificate "
    "in the operating system's trust store or pass --ca-file PEM (MFC_CA_FILE); "
    "also check the computer's clock"
)
_MAX_CHAIN = 12


@functools.lru_cache(maxsize=4)
def verifying_context(ca_file: Path | None = None) -> ssl.SSLContext:
    """A client context that verifies against the OS trust store (plus ``ca_file``)."""
    import truststore

    context = truststore.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    if ca_file is not None:
        context.load_verify_locations(cafile=str(ca_file))
    return context


def certificate_problem(exc: BaseException, *, reason_chars: int) -> str | None:
    """The reason a certificate was refused, if that is what ``exc`` comes down to, cut to
    ``reason_chars`` (the ``tls_reason_chars`` limit of the caller's server)."""
    seen: set[int] = set()
    pending: list[BaseException] = [exc]
    while pending and len(seen) < _MAX_CHAIN:
        current = pending.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, ssl.SSLCertVerificationError):
            reason = current.verify_message or current.reason or "verification failed"
            text = "".join(ch if ch.isprintable() else " " for ch in str(reason))
            return text[:reason_chars]
        for linked in (current.__cause__, current.__context__, getattr(current, "reason", None)):
            if isinstance(linked, BaseException):
                pending.append(linked)
        pending.extend(arg for arg in current.args if isinstance(arg, BaseException))
    return None
