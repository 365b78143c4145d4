"""``--client-cert``: the PEM file is parsed by ``cryptography``, and a file msal could not
sign with is refused before any request, in our words."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from mfconnector.auth.config import AuthConfig
from mfconnector.auth.pem import certificate_credential, client_credential
from mfconnector.errors import AuthError
from mfconnector.limits import DEFAULT_LIMITS
from tests.support.app_certs import self_signed

CLIENT_ID = "11111111-2222-3333-4444-555555555555"
TENANT_ID = "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"
_RSA: list[rsa.RSAPrivateKey] = []


def rsa_key(number: int = 0) -> rsa.RSAPrivateKey:
    """Two RSA keys, made once per run (key generation is the slow part)."""
    while len(_RSA) <= number:
        _RSA.append(rsa.generate_private_key(public_exponent=65537, key_size=2048))
    return _RSA[number]


def certificate_for(key: Any) -> x509.Certificate:
    return self_signed(key, "mfconnector app")


def key_pem(key: Any, password: bytes | None = None) -> bytes:
    encryption: serialization.KeySerializationEncryption = (
        serialization.BestAvailableEncryption(password)
        if password
        else serialization.NoEncryption()
    )
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption
    )


def cert_pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def credential(tmp_path: Path, data: bytes, thumbprint: str | None = None) -> Any:
    path = tmp_path / "app.pem"
    path.write_bytes(data)
    config = AuthConfig(
        client_id=CLIENT_ID,
        tenant=TENANT_ID,
        cache_path=tmp_path / "cache.json",
        app_only=True,
        user="adele@contoso.example",
        client_cert_path=path,
        client_cert_thumbprint=thumbprint,
    )
    return client_credential(config)


@pytest.mark.parametrize("cert_first", [False, True])
def test_a_key_and_its_certificate_give_msal_both(tmp_path: Path, cert_first: bool) -> None:
    key, cert = rsa_key(), certificate_for(rsa_key())
    parts = [key_pem(key), b"Bag Attributes: exported by a tool\n", cert_pem(cert)]
    found = credential(tmp_path, b"".join(reversed(parts) if cert_first else parts))
    assert set(found) == {"private_key", "public_certificate"}
    loaded = serialization.load_pem_private_key(found["private_key"].encode(), None)
    assert loaded.public_key() == key.public_key()
    assert x509.load_pem_x509_certificate(found["public_certificate"].encode()) == cert


def test_a_given_thumbprint_must_be_the_certificates(tmp_path: Path) -> None:
    key, cert = rsa_key(), certificate_for(rsa_key())
    data = key_pem(key) + cert_pem(cert)
    sha1 = cert.fingerprint(hashes.SHA1()).hex().upper()  # as the portal shows it
    found = credential(tmp_path, data, thumbprint=sha1)
    assert found["thumbprint"] == sha1 and "public_certificate" not in found
    with pytest.raises(AuthError, match="not the thumbprint of the certificate") as caught:
        credential(tmp_path, data, thumbprint="ab" * 20)
    assert caught.value.hint and "Certificates & secrets" in caught.value.hint


def test_a_key_alone_needs_a_thumbprint(tmp_path: Path) -> None:
    with pytest.raises(AuthError, match="has no certificate and no thumbprint"):
        credential(tmp_path, key_pem(rsa_key()))
    found = credential(tmp_path, key_pem(rsa_key()), thumbprint="ab" * 20)
    assert found["thumbprint"] == "ab" * 20


def test_an_encrypted_key_is_refused_as_passphrase_protected(tmp_path: Path) -> None:
    data = key_pem(rsa_key(), password=b"correct horse") + cert_pem(certificate_for(rsa_key()))
    with pytest.raises(AuthError, match="passphrase-protected") as caught:
        credential(tmp_path, data)
    assert "correct horse" not in str(caught.value) + str(caught.value.hint)


def test_a_certificate_without_its_key_is_refused(tmp_path: Path) -> None:
    with pytest.raises(AuthError, match="holds no PEM private key"):
        credential(tmp_path, cert_pem(certificate_for(rsa_key())))


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\x00\xff" * 500,
        b"-----BEGIN PRIVATE KEY-----\nnot a key at all\n-----END PRIVATE KEY-----\n",
        b"-----BEGIN RSA PRIVATE KEY-----\nMIIB\n-----END RSA PRIVATE KEY-----\n",
    ],
    ids=["empty", "binary", "fake-pkcs8", "truncated-rsa"],
)
def test_garbage_is_refused_as_holding_no_key(tmp_path: Path, data: bytes) -> None:
    """The markers alone are not a key (a text search would have passed the last two on)."""
    with pytest.raises(AuthError, match="holds no PEM private key") as caught:
        credential(tmp_path, data + cert_pem(certificate_for(rsa_key())))
    assert "Traceback" not in caught.value.message and "cryptography" not in caught.value.message


def test_another_keys_certificate_is_refused(tmp_path: Path) -> None:
    data = key_pem(rsa_key(0)) + cert_pem(certificate_for(rsa_key(1)))
    with pytest.raises(AuthError, match="not the private key's certificate"):
        credential(tmp_path, data)


def test_a_key_that_is_not_rsa_is_refused(tmp_path: Path) -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    with pytest.raises(AuthError, match="not an RSA key"):
        credential(tmp_path, key_pem(key) + cert_pem(certificate_for(key)))


@pytest.mark.parametrize(
    ("stored_with", "given", "said"),
    [
        (b"right", "right", None),
        (b"right", "wrong", "MFC_CLIENT_CERT_PASSPHRASE does not open the private key"),
        (b"right", None, "set MFC_CLIENT_CERT_PASSPHRASE"),
        (None, "needless", "is not passphrase-protected"),
    ],
)
def test_a_passphrase_opens_an_encrypted_key_only_when_it_is_the_right_one(
    tmp_path: Path, stored_with: bytes | None, given: str | None, said: str | None
) -> None:
    key = rsa_key()
    path = tmp_path / "app.pem"
    path.write_bytes(key_pem(key, stored_with) + cert_pem(certificate_for(key)))
    open_it = functools.partial(
        certificate_credential,
        path,
        max_bytes=DEFAULT_LIMITS.cert_file_bytes,
        passphrase=given,
        setting="MFC_CLIENT_CERT_PATH",
        passphrase_setting="MFC_CLIENT_CERT_PASSPHRASE",
    )
    if said is None:
        credential = open_it()
        loaded = serialization.load_pem_private_key(credential["private_key"].encode(), None)
        assert loaded.public_key() == key.public_key()
        return
    with pytest.raises(AuthError) as caught:
        open_it()
    text = caught.value.message + " " + (caught.value.hint or "")
    assert said in text and str(path) in text
    assert "PRIVATE KEY" not in text and (given is None or given not in text)
