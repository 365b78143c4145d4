"""The demo's data is pinned: a change to what ``--demo`` serves must be deliberate.

``demo_data_dump.dump()`` walks every answer the demo emulator serves (folders, messages
with both body types, attachments' bytes, drive items, file bytes), then a fixed script of
writes read back, into one canonical document; this test pins its sha256. A refactor of
the emulator must leave it unchanged (0.3's split of the emulator was checked this way
against 0.2's code: the same bytes).

If you changed the demo's data on purpose, regenerate the pin and say so in the commit:

    python tests/support/demo_data_dump.py /tmp/demo-after.json    # prints sha256 and length
    git stash; python tests/support/demo_data_dump.py /tmp/demo-before.json; git stash pop
    diff /tmp/demo-before.json /tmp/demo-after.json        # one answer per line: review it

then put the printed figures in ``PINNED_SHA256`` and ``PINNED_BYTES`` below.
"""

from __future__ import annotations

import hashlib
import json

import pytest

from tests.support.demo_data_dump import dump

PINNED_SHA256 = "7be5bbdd4e15bbcb08d612b9839904eb570ef0cc219c3fe59219e08e325ecda9"
PINNED_BYTES = 4_423_969


@pytest.mark.slow
def test_the_demo_serves_exactly_the_pinned_data() -> None:
    data = dump()
    answers = json.loads(data)
    assert len(answers) > 1000, "the walk no longer reaches the demo's messages and files"
    assert all(answer["status"] in (200, 201, 202, 204, 302) for answer in answers), "an error"
    assert (hashlib.sha256(data).hexdigest(), len(data)) == (PINNED_SHA256, PINNED_BYTES)
