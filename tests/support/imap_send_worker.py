"""One process of the send race: claim the preparation in the shared state file and, only
if the claim is this process's, re-freeze the draft, compare digests and send it once.

    python imap_send_worker.py STATE_FILE PREPARED_ID DIGEST DRAFT_REF IMAP_PORT SMTP_PORT GO_FILE

Prints one JSON line: the claim's status and, for the winner, the send's outcome. Waits
for GO_FILE to exist first, so both racers start their claims together."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import trio

from mfconnector.imap.backend import ImapMailBackend
from mfconnector.imap.settings import ServerSettings
from mfconnector.limits import DEFAULT_LIMITS
from mfconnector.mail.model import Person
from mfconnector.mail.refs import account_tag, parse_reference
from mfconnector.writes.store import SendStore


async def race(argv: list[str]) -> dict[str, object]:
    state, prepared_id, digest, draft, imap_port, smtp_port, _ = argv
    store = SendStore(Path(state))
    claim = store.claim(prepared_id, "work", "", digest)
    if claim.status != "claimed":
        return {"claim": claim.status}
    tag = account_tag("imap", "work")
    backend = ImapMailBackend(
        tag,
        ServerSettings("127.0.0.1", int(imap_port), "plain", "alice", "secret"),
        DEFAULT_LIMITS,
        smtp=ServerSettings("127.0.0.1", int(smtp_port), "plain", "", ""),
        sender=Person("Alice", "alice@example.org"),
    )
    frozen = await backend.freeze(parse_reference(draft, tag, "draft_id"))
    if frozen.digest != digest:
        store.finish(prepared_id, "rejected", {"reason": "the draft changed"})
        return {"claim": "claimed", "outcome": "changed"}
    result = await backend.send(frozen)
    state = result.outcome if result.outcome in ("sent", "rejected") else "unknown"
    store.finish(prepared_id, state, {"outcome": result.outcome})
    await backend.aclose()
    return {"claim": "claimed", "outcome": result.outcome}


if __name__ == "__main__":
    while not Path(sys.argv[7]).exists():
        time.sleep(0.005)
    print(json.dumps(trio.run(race, sys.argv[1:])))
