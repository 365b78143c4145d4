"""Where mfconnector keeps files of its own (a minimal stand-in until platform paths land)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

__all__ = ["default_state_dir"]


def default_state_dir(env: Mapping[str, str]) -> Path:
    """``$XDG_STATE_HOME/mfconnector``, else ``~/.local/state/mfconnector``."""
    xdg = env.get("XDG_STATE_HOME", "")
    if xdg and Path(xdg).is_absolute():
        return Path(xdg) / "mfconnector"
    home = env.get("HOME") or str(Path.home())
    return Path(home) / ".local" / "state" / "mfconnector"
