"""App-registration certificates for certificate client credentials: an RSA key and a
self-signed certificate made from it, written as one PEM file the way an operator makes one
(``openssl req -x509 -newkey rsa:2048 ...``), the key optionally passphrase-protected."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID

__all__ = ["AppCertificate", "app_key", "self_signed", "write_app_certificate"]


@functools.cache
def app_key(number: int = 0) -> rsa.RSAPrivateKey:
    """RSA keys, each made once per run (generating one is the slow part)."""
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@dataclass(frozen=True)
class AppCertificate:
    path: Path
    certificate: x509.Certificate
    """What the operator uploads to the app registration (as a .cer)."""


def self_signed(
    key: rsa.RSAPrivateKey, common_name: str = "mfconnector hosted"
) -> x509.Certificate:
    """A self-signed certificate for ``key``, valid from five minutes ago for a day."""
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    now = datetime.now(UTC)
    return (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + timedelta(days=1))
        .sign(key, hashes.SHA256())
    )


def write_app_certificate(
    path: Path,
    *,
    key: rsa.RSAPrivateKey | None = None,
    certificate_key: rsa.RSAPrivateKey | None = None,
    passphrase: str | None = None,
) -> AppCertificate:
    """``path`` holding ``key`` (encrypted with ``passphrase`` if given) and a certificate
    for ``certificate_key`` (the same key unless a mismatch is wanted)."""
    key = key or app_key()
    certificate = self_signed(certificate_key or key)
    encryption: serialization.KeySerializationEncryption = (
        serialization.BestAvailableEncryption(passphrase.encode())
        if passphrase
        else serialization.NoEncryption()
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption)
        + certificate.public_bytes(serialization.Encoding.PEM)
    )
    return AppCertificate(path, certificate)
