"""The app-only client credential: a secret, or a PEM private key with its certificate.

msal wants ``{"private_key": pem, "thumbprint": sha1}`` or ``{"private_key": pem,
"public_certificate": cert}``; this reads the PEM file once, bounded, and says exactly what
is wrong with it (no key, a passphrase-protected key, no certificate and no thumbprint).
"""

from __future__ import annotations

from mfconnector.auth.config import AuthConfig, AuthConfigError
from mfconnector.limits import DEFAULT_LIMITS

__all__ = ["client_credential"]

_BEGIN_CERT = "-----BEGIN CERTIFICATE-----"
_END_CERT = "-----END CERTIFICATE-----"


def client_credential(config: AuthConfig) -> str | dict[str, str]:
    """What msal's ``client_credential=`` takes, from the secret or the PEM file."""
    if config.client_secret:
        return config.client_secret
    path = config.client_cert_path
    if path is None:
        raise AuthConfigError(
            "app-only mode needs a client credential",
            hint="set MFC_CLIENT_SECRET or --client-cert",
        )
    try:
        with open(path, "rb") as handle:
            raw = handle.read(DEFAULT_LIMITS.cert_file_bytes + 1)
    except OSError as exc:
        raise AuthConfigError(
            f"cannot read the client certificate {path}: {exc.strerror or type(exc).__name__}"
        ) from None
    pem = raw.decode("utf-8", "replace")
    if len(raw) > DEFAULT_LIMITS.cert_file_bytes or "PRIVATE KEY-----" not in pem:
        raise AuthConfigError(
            f"{path} holds no PEM private key",
            hint="--client-cert needs a PEM file with the private key (and certificate)",
        )
    if "ENCRYPTED" in pem:
        raise AuthConfigError(
            f"the private key in {path} is passphrase-protected",
            hint="store it unencrypted in a file only this user can read (chmod 600)",
        )
    if config.client_cert_thumbprint:
        return {"private_key": pem, "thumbprint": config.client_cert_thumbprint}
    start, end = pem.find(_BEGIN_CERT), pem.find(_END_CERT)
    if start < 0 or end < 0:
        raise AuthConfigError(
            f"{path} has no certificate and no thumbprint was given",
            hint="add the certificate to the PEM file or pass --client-cert-thumbprint",
        )
    return {"private_key": pem, "public_certificate": pem[start : end + len(_END_CERT)]}
