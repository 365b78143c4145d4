"""One digest names one outgoing message everywhere.

The digest is SHA-256 over a canonical encoding of a frozen message's neutral record
(``FrozenOutgoing.record``: every recipient, the subject, the whole body, each
attachment's name, type, size and SHA-256, and what changes delivery or threading)::

    b"mfconnector-message-v3\\n" + JSON(record, keys sorted, no spaces, UTF-8)

Every backend's ``freeze`` digests its record with it, so the draft read
(``source_digest``), ``revise_draft``, ``mail_prepare`` and the re-read before a
confirmed send agree whatever the provider.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

__all__ = ["DIGEST_PREFIX", "canonical", "digest_of"]

DIGEST_PREFIX = b"mfconnector-message-v3\n"
"""v3: the record names the draft by its reference and its body type as ``content_type``."""


def canonical(record: Mapping[str, Any]) -> bytes:
    return DIGEST_PREFIX + json.dumps(
        record, sort_keys=True, separators=(",", ":"), ensure_ascii=False
    ).encode("utf-8")


def digest_of(record: Mapping[str, Any]) -> str:
    return hashlib.sha256(canonical(record)).hexdigest()
