"""Where the bundled demo mailbox and drive live, so ``--demo`` needs no account and no path.

A wheel ships the file as package data (``mfconnector/_demo/demo.json``, put there by the
hatch ``force-include`` rule); a source checkout or editable install has it at
``fixtures/demo.json`` beside the package directory instead.
"""

from __future__ import annotations

from pathlib import Path

from mfconnector.errors import FixtureError

__all__ = ["demo_fixture_path"]

_PACKAGE_DIR = Path(__file__).resolve().parent


def demo_fixture_path() -> Path:
    """The demo fixture file: the packaged copy first, then the source checkout's."""
    candidates = (
        _PACKAGE_DIR / "_demo" / "demo.json",
        _PACKAGE_DIR.parent / "fixtures" / "demo.json",
    )
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    looked = " and ".join(str(candidate) for candidate in candidates)
    raise FixtureError(
        f"the bundled demo mailbox is missing (looked for {looked}); "
        "reinstall mfconnector, or pass a fixture file of your own"
    )
