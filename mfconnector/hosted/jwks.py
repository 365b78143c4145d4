"""The issuer's signing keys: fetched with a byte cap, cached, refreshed on a new ``kid``.

An issuer rotates keys without notice, so a token signed with a key we have not seen is
the one case that justifies a fetch outside the cache period. Made-up key ids are also
what an attacker sends, so such fetches are spaced by ``jwks_refresh_min_seconds``: a
flood of forged tokens costs one request a minute to the issuer, never one per token.
One fetch at a time (a lock); the others wait for its result.

PyJWT's own ``PyJWKClient`` fetches with blocking urllib and no size cap, so the fetch is
ours (httpx, streamed into a counted buffer, a deadline) and the parsing is PyJWT's.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx
import jwt
import trio

from mfconnector.hosted.resource import ResourceSettings
from mfconnector.limits import Limits
from mfconnector.net.hosts import is_loopback_host

__all__ = ["JwksCache", "KeySetError"]


FETCH_HEADERS = {"Accept": "application/json", "Accept-Encoding": "identity"}
"""Identity encoding: the byte cap counts what arrives, and nothing expands after it."""


class KeySetError(Exception):
    """The issuer's keys could not be had; the message is safe to log and to show."""


@dataclass(frozen=True, slots=True)
class _KeySet:
    keys: dict[str, jwt.PyJWK]
    fetched_at: float


def _strict_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise KeySetError(f"the document repeats the key {key!r}")
        result[key] = value
    return result


class JwksCache:
    """Keys by ``kid`` for one issuer; ``key(kid)`` fetches only when it must."""

    def __init__(
        self,
        settings: ResourceSettings,
        client: httpx.AsyncClient,
        limits: Limits,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._settings = settings
        self._client = client
        self._limits = limits
        self._clock = clock
        self._keys: _KeySet | None = None
        self._last_forced = -math.inf
        self._failure: KeySetError | None = None
        self._failed_at = -math.inf
        self._jwks_url = settings.jwks_url
        self._lock = trio.Lock()
        self.fetches = 0
        """JWKS documents fetched so far (discovery not counted): for status and tests."""

    async def key(self, kid: str) -> jwt.PyJWK | None:
        """The key with this id, or None when the issuer does not publish one."""
        current = self._fresh()
        if current is not None and (kid in current.keys or not self._may_force()):
            return current.keys.get(kid)
        async with self._lock:
            current = self._fresh()
            if current is not None:
                if kid in current.keys:
                    return current.keys[kid]  # fetched by another task while we waited
                if not self._may_force():
                    return None
                self._last_forced = self._clock()
            elif self._failure is not None and not self._may_retry():
                raise self._failure
            try:
                self._keys = await self._fetch()
            except KeySetError as exc:
                self._failure, self._failed_at = exc, self._clock()
                raise
            self._failure = None
            return self._keys.keys.get(kid)

    def _fresh(self) -> _KeySet | None:
        keys = self._keys
        return keys if keys is not None and not self._expired(keys) else None

    def _may_retry(self) -> bool:
        return self._clock() - self._failed_at >= self._limits.jwks_refresh_min_seconds

    def _expired(self, keys: _KeySet) -> bool:
        return self._clock() - keys.fetched_at >= self._limits.jwks_cache_seconds

    def _may_force(self) -> bool:
        return self._clock() - self._last_forced >= self._limits.jwks_refresh_min_seconds

    async def _fetch(self) -> _KeySet:
        if self._jwks_url is None:
            discovery = await self._get_json(self._settings.discovery_url, "discovery document")
            if discovery.get("issuer") != self._settings.issuer:
                raise KeySetError("the discovery document names another issuer")
            uri = discovery.get("jwks_uri")
            if not isinstance(uri, str) or not _acceptable(uri):
                raise KeySetError("the discovery document has no usable https jwks_uri")
            self._jwks_url = uri
        document = await self._get_json(self._jwks_url, "key set")
        self.fetches += 1
        return _KeySet(keys=self._parse(document), fetched_at=self._clock())

    def _parse(self, document: dict[str, Any]) -> dict[str, jwt.PyJWK]:
        entries = document.get("keys")
        if not isinstance(entries, list):
            raise KeySetError("the key set has no 'keys' list")
        if len(entries) > self._limits.jwks_keys:
            raise KeySetError(f"the key set has more than {self._limits.jwks_keys} keys")
        keys: dict[str, jwt.PyJWK] = {}
        for entry in entries:
            if not isinstance(entry, dict) or entry.get("use", "sig") != "sig":
                continue
            kid = entry.get("kid")
            if not isinstance(kid, str) or entry.get("kty") not in {"RSA", "EC"}:
                continue
            try:
                keys[kid] = jwt.PyJWK(entry)
            except (jwt.PyJWKError, jwt.InvalidKeyError, ValueError, TypeError):
                continue  # one malformed or unsupported key must not hide the others
        return keys

    async def _get_json(self, url: str, what: str) -> dict[str, Any]:
        cap = self._limits.jwks_body_bytes
        body = bytearray()
        try:
            with trio.fail_after(self._limits.jwks_fetch_seconds):
                async with self._client.stream(
                    "GET",
                    url,
                    headers={"Accept": "application/json", "Accept-Encoding": "identity"},
                ) as response:
                    if response.status_code != 200:
                        raise KeySetError(
                            f"the issuer's {what} answered HTTP {response.status_code}"
                        )
                    declared = response.headers.get("content-length")
                    if declared is not None and declared.isdigit() and int(declared) > cap:
                        raise KeySetError(f"the issuer's {what} is larger than {cap} bytes")
                    async for chunk in response.aiter_raw():
                        body += chunk
                        if len(body) > cap:
                            raise KeySetError(f"the issuer's {what} is larger than {cap} bytes")
        except trio.TooSlowError:
            raise KeySetError(f"the issuer's {what} did not arrive within the deadline") from None
        except httpx.HTTPError as exc:
            raise KeySetError(
                f"the issuer's {what} could not be fetched ({type(exc).__name__})"
            ) from None
        try:
            parsed = json.loads(bytes(body), object_pairs_hook=_strict_object)
        except (ValueError, RecursionError):
            raise KeySetError(f"the issuer's {what} is not valid JSON") from None
        if not isinstance(parsed, dict):
            raise KeySetError(f"the issuer's {what} is not a JSON object")
        return parsed


def _acceptable(url: str) -> bool:
    parts = httpx.URL(url)
    return parts.scheme == "https" or (parts.scheme == "http" and is_loopback_host(parts.host))
