"""The on-behalf-of Graph token cache in the shared state store, sealed before it is stored.

Replicas behind one Redis share their users' Graph tokens, so a user whose requests land
on another replica costs no second exchange with Entra. What Redis holds is never a token:
each is sealed with AES-256-GCM (a fresh 96-bit nonce per seal) under a key the replicas
get from their environment (``MFC_TOKEN_CACHE_KEY``), never from Redis, and the user's
subject key and the assertion's id are the associated data: a value read by someone with
Redis access is ciphertext, and one copied to another user's or another assertion's slot
does not open. Without the key the cache stays in each replica's memory.

Source: NIST SP 800-38D (GCM); the ``cryptography`` package's ``AESGCM``.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import os
from collections.abc import Callable, Mapping

import trio

from mfconnector.writes.state import StateStore
from mfconnector.writes.store import StateStoreError

__all__ = ["SEAL_KEY_BYTES", "TOKEN_CACHE_KEY_ENV", "SealKeyError", "SealedTokens", "seal_key_of"]

TOKEN_CACHE_KEY_ENV = "MFC_TOKEN_CACHE_KEY"
SEAL_KEY_BYTES = 32
"""AES-256."""
NONCE_BYTES = 12
log = logging.getLogger("mfconnector.hosted.sealed_tokens")


class SealKeyError(ValueError):
    """``MFC_TOKEN_CACHE_KEY`` is set but is not a 32-byte key."""


def seal_key_of(env: Mapping[str, str]) -> bytes | None:
    """The key from ``MFC_TOKEN_CACHE_KEY`` (64 hex digits or base64 of 32 bytes), or None."""
    raw = env.get(TOKEN_CACHE_KEY_ENV, "").strip()
    if not raw:
        return None
    try:
        key = (
            bytes.fromhex(raw)
            if len(raw) == 2 * SEAL_KEY_BYTES
            else base64.b64decode(raw, validate=True)
        )
    except (ValueError, binascii.Error):
        key = b""
    if len(key) != SEAL_KEY_BYTES:
        raise SealKeyError(
            f"{TOKEN_CACHE_KEY_ENV} must be {SEAL_KEY_BYTES} random bytes, as 64 hex digits "
            "(e.g. from `openssl rand -hex 32`); the same on every replica"
        )
    return key


class SealedTokens:
    """``get``/``put`` of one user's Graph token in the shared store, sealed."""

    def __init__(self, store_for: Callable[[str], StateStore], key: bytes) -> None:
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        if len(key) != SEAL_KEY_BYTES:
            raise ValueError(f"the seal key must be {SEAL_KEY_BYTES} bytes")
        self._aead = AESGCM(key)
        self._store_for = store_for
        self._limiter = trio.CapacityLimiter(4)

    @staticmethod
    def _bound(namespace: str, slot: str) -> bytes:
        return f"mfc-obo-v1\x00{namespace}\x00{slot}".encode()

    def seal(self, namespace: str, slot: str, token: str, expires_at: float) -> bytes:
        nonce = os.urandom(NONCE_BYTES)
        plain = json.dumps({"t": token, "e": expires_at}).encode()
        return nonce + self._aead.encrypt(nonce, plain, self._bound(namespace, slot))

    def open(self, namespace: str, slot: str, sealed: bytes) -> tuple[str, float] | None:
        """The token and its expiry; None for anything that does not open (tampered, moved,
        sealed under another key)."""
        from cryptography.exceptions import InvalidTag

        if len(sealed) <= NONCE_BYTES:
            return None
        try:
            plain = self._aead.decrypt(
                sealed[:NONCE_BYTES], sealed[NONCE_BYTES:], self._bound(namespace, slot)
            )
            doc = json.loads(plain)
            return str(doc["t"]), float(doc["e"])
        except (InvalidTag, ValueError, KeyError, TypeError):
            return None

    async def get(self, namespace: str, slot: str) -> tuple[str, float] | None:
        """A cached token of this user and assertion; None when absent or unreadable (a
        store that cannot be reached only costs an exchange)."""
        try:
            sealed = await trio.to_thread.run_sync(
                self._store_for(namespace).token_get, slot, limiter=self._limiter
            )
        except StateStoreError as error:
            log.warning("the shared token cache cannot be read: %s", error.message)
            return None
        return None if sealed is None else self.open(namespace, slot, sealed)

    async def put(
        self, namespace: str, slot: str, token: str, expires_at: float, lifetime: float
    ) -> None:
        sealed = self.seal(namespace, slot, token, expires_at)
        try:
            await trio.to_thread.run_sync(
                self._store_for(namespace).token_put, slot, sealed, lifetime, limiter=self._limiter
            )
        except StateStoreError as error:
            log.warning("the shared token cache cannot be written: %s", error.message)
