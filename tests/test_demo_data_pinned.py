"""The demo's data is pinned: a change to what ``--demo`` serves must be deliberate.

``demo_data_dump.dump()`` walks every answer the demo emulator serves (folders, messages
with both body types, attachments' bytes, drive items, file bytes) into one canonical
document; this test pins its sha256. A refactor of the emulator must leave it unchanged.

If you changed the demo's data on purpose, regenerate the pin and say so in the commit:

    python tests/demo_data_dump.py /tmp/demo-after.json    # prints sha256 and length
    git stash; python tests/demo_data_dump.py /tmp/demo-before.json; git stash pop
    diff /tmp/demo-before.json /tmp/demo-after.json        # one answer per line: review it

then put the printed figures in ``PINNED_SHA256`` and ``PINNED_BYTES`` below.
"""

from __future__ import annotations

import hashlib
import json

import pytest
from demo_data_dump import dump

PINNED_SHA256 = "55f3d1dae94b4d7addd2172cbf5180522c487dd26840f759e52da7a2ea014180"
PINNED_BYTES = 4_179_736


@pytest.mark.slow
def test_the_demo_serves_exactly_the_pinned_data() -> None:
    data = dump()
    answers = json.loads(data)
    assert len(answers) > 1000, "the walk no longer reaches the demo's messages and files"
    assert all(answer["status"] in (200, 302) for answer in answers), "the walk hit an error"
    assert (hashlib.sha256(data).hexdigest(), len(data)) == (PINNED_SHA256, PINNED_BYTES)
