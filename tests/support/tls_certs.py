"""Test certificates made with ``cryptography``: a private CA and server certificates.

A CA certificate is trusted only where a test passes it (``--ca-file``), never installed in
the machine's trust store, so a client that ignored the setting would fail verification.
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

__all__ = ["ServerCertificate", "make_ca_and_server", "make_self_signed"]


@dataclass(frozen=True)
class ServerCertificate:
    cert_file: Path
    key_file: Path
    ca_file: Path | None
    """The CA that signed it (PEM), or None for a self-signed certificate."""


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _write_key(key: ec.EllipticCurvePrivateKey, path: Path) -> None:
    path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )


def _server_cert(
    key: ec.EllipticCurvePrivateKey,
    issuer_key: ec.EllipticCurvePrivateKey,
    issuer: x509.Name,
    hosts: list[str],
    *,
    self_signed: bool,
) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    names: list[x509.GeneralName] = []
    for host in hosts:
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            names.append(x509.DNSName(host))
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(hosts[0]))
        .issuer_name(issuer)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
    )
    if not self_signed:
        builder = builder.add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(issuer_key.public_key()),
            critical=False,
        )
    return builder.sign(issuer_key, hashes.SHA256())


def make_ca_and_server(directory: Path, hosts: list[str]) -> ServerCertificate:
    """A CA, and a server certificate it signed for ``hosts`` (DNS names or IP addresses)."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = _name("mfconnector test CA")
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(
            x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = _server_cert(key, ca_key, ca_name, hosts, self_signed=False)
    directory.mkdir(parents=True, exist_ok=True)
    ca_file, cert_file, key_file = (
        directory / "ca.pem",
        directory / "server.pem",
        directory / "key.pem",
    )
    ca_file.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    _write_key(key, key_file)
    return ServerCertificate(cert_file, key_file, ca_file)


def make_self_signed(directory: Path, hosts: list[str]) -> ServerCertificate:
    """A server certificate that vouches only for itself: no trust store accepts it."""
    key = ec.generate_private_key(ec.SECP256R1())
    cert = _server_cert(key, key, _name(hosts[0]), hosts, self_signed=True)
    directory.mkdir(parents=True, exist_ok=True)
    cert_file, key_file = directory / "self-signed.pem", directory / "self-signed-key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    _write_key(key, key_file)
    return ServerCertificate(cert_file, key_file, None)
