"""The app-only client credential: a secret, or a PEM private key with its certificate.

msal wants ``{"private_key": pem, "thumbprint": sha1}`` or ``{"private_key": pem,
"public_certificate": cert}``. The PEM file is read once, bounded, and parsed with
``cryptography`` (the library msal itself signs with), so what msal gets is a key it can
use, and a file it could not use is refused here, in our words: no key, a
passphrase-protected key without its passphrase (or with the wrong one), a key that is not
RSA, no certificate and no thumbprint, a certificate or a thumbprint that does not belong
to the key. The messages name the file and the setting, never what the file holds.

The stdio sign-in (``--client-cert``) and hosted mode (``MFC_CLIENT_CERT_PATH``) both
come here.
"""

from __future__ import annotations

from pathlib import Path

from cryptography import x509
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric.rsa import RSAPrivateKey

from mfconnector.auth.config import AuthConfig, AuthConfigError

__all__ = ["certificate_credential", "client_credential", "thumbprint_of"]


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
    return certificate_credential(
        path, max_bytes=config.limits.cert_file_bytes, thumbprint=config.client_cert_thumbprint
    )


def certificate_credential(
    path: Path,
    *,
    max_bytes: int,
    thumbprint: str | None = None,
    passphrase: str | None = None,
    setting: str = "--client-cert",
    passphrase_setting: str | None = None,
) -> dict[str, str]:
    """msal's certificate credential from the PEM file at ``path`` (``setting`` names where
    the path came from; ``passphrase_setting``, if any, where a key's passphrase may). A
    file past ``max_bytes`` (the ``cert_file_bytes`` limit) is refused unread."""
    needs_key = f"{setting} needs a PEM file with the private key (and certificate)"
    data = _read_bounded(path, max_bytes, needs_key)
    key = _private_key(path, data, passphrase, needs_key, passphrase_setting)
    key_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode("ascii")
    cert = _certificate(data)
    given = thumbprint
    if cert is not None:
        if cert.public_key() != key.public_key():
            raise AuthConfigError(
                f"the certificate in {path} is not the private key's certificate",
                hint="put the key and the certificate made from it in one PEM file",
            )
        if given is not None and given.lower() != thumbprint_of(cert):
            raise AuthConfigError(
                f"--client-cert-thumbprint is not the thumbprint of the certificate in {path}",
                hint="drop --client-cert-thumbprint (it is read from the certificate), or "
                "copy the thumbprint shown in Certificates & secrets",
            )
    if given:
        return {"private_key": key_pem, "thumbprint": given}
    if cert is None:
        raise AuthConfigError(
            f"{path} has no certificate and no thumbprint was given",
            hint="add the certificate to the PEM file or pass --client-cert-thumbprint",
        )
    certificate_pem = cert.public_bytes(serialization.Encoding.PEM).decode("ascii")
    return {"private_key": key_pem, "public_certificate": certificate_pem}


def thumbprint_of(cert: x509.Certificate) -> str:
    """The certificate's SHA-1 thumbprint as Entra ID shows it, in lower-case hex."""
    return cert.fingerprint(hashes.SHA1()).hex()  # Entra ID's thumbprint is SHA-1


def _read_bounded(path: Path, limit: int, needs_key: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            data = handle.read(limit + 1)
    except OSError as exc:
        raise AuthConfigError(
            f"cannot read the client certificate {path}: {exc.strerror or type(exc).__name__}"
        ) from None
    if len(data) > limit:
        raise AuthConfigError(
            f"{path} is larger than the {limit:,}-byte limit for a certificate file"
            ": no PEM private key was read",
            hint=needs_key,
        )
    return data


def _private_key(
    path: Path,
    data: bytes,
    passphrase: str | None,
    needs_key: str,
    passphrase_setting: str | None,
) -> RSAPrivateKey:
    password = passphrase.encode("utf-8") if passphrase else None
    try:
        key = serialization.load_pem_private_key(data, password=password)
    except TypeError:  # cryptography: a password for a plain key, or none for an encrypted one
        if password is not None:
            raise AuthConfigError(
                f"the private key in {path} is not passphrase-protected",
                hint=f"unset {passphrase_setting}",
            ) from None
        store = "store it unencrypted in a file only this user can read (chmod 600)"
        raise AuthConfigError(
            f"the private key in {path} is passphrase-protected",
            hint=f"set {passphrase_setting}, or {store}" if passphrase_setting else store,
        ) from None
    except (ValueError, UnsupportedAlgorithm):
        if password is not None and _is_encrypted(data):
            raise AuthConfigError(
                f"{passphrase_setting} does not open the private key in {path}",
                hint=f"check {passphrase_setting}",
            ) from None
        raise AuthConfigError(f"{path} holds no PEM private key", hint=needs_key) from None
    if not isinstance(key, RSAPrivateKey):
        raise AuthConfigError(
            f"the private key in {path} is not an RSA key",
            hint="Microsoft Entra ID takes RSA certificates for app credentials",
        )
    return key


def _is_encrypted(data: bytes) -> bool:
    """Whether the file's key needs a passphrase (cryptography says so by a TypeError)."""
    try:
        serialization.load_pem_private_key(data, password=None)
    except TypeError:
        return True
    except (ValueError, UnsupportedAlgorithm):
        return False
    return False


def _certificate(data: bytes) -> x509.Certificate | None:
    """The file's first certificate, or None when it holds none that can be read."""
    try:
        return x509.load_pem_x509_certificate(data)
    except ValueError:
        return None
