"""The Gmail backend's address fast path agrees with the stdlib parser it stands in for."""

from __future__ import annotations

from email.utils import getaddresses

import pytest

from mfconnector.gmail.convert import _addresses

CASES = [
    "ann@mail.example",
    "Ann Sender <ann@mail.example>",
    '"Sender, Ann" <ann@mail.example>',
    "王伟 <wang.wei@partner.example>",
    "ليلى حداد <layla@partner.example>, Bo <bo@mail.example>",
    "a@x.example, b@y.example,c@z.example",
    "<only@mail.example>",
    "Ann (work) <ann@mail.example>",  # a comment: the stdlib's business
    "undisclosed-recipients:;",  # a group
    '"quoted \\" mark" <q@mail.example>',
    "not an address",
    "",
]


@pytest.mark.parametrize("value", CASES)
def test_the_fast_path_gives_what_getaddresses_gives(value: str) -> None:
    expected = [(name, address) for name, address in getaddresses([value]) if name or address]
    got = [(name, address) for name, address in _addresses(value) if name or address]
    assert got == expected
