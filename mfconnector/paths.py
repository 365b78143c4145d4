"""Where mfconnector keeps files of its own: the token cache and a state directory.

Each platform has a convention, and users (and their backup and cleanup tools) expect it:

- Windows: token cache ``%LOCALAPPDATA%\\mfconnector\\Cache\\token_cache.json``, state
  ``%LOCALAPPDATA%\\mfconnector``;
- macOS: ``~/Library/Caches/mfconnector/token_cache.json``, state
  ``~/Library/Application Support/mfconnector``;
- Linux and other Unix: ``$XDG_CACHE_HOME/mfconnector/token_cache.json`` (``~/.cache``), state
  ``$XDG_STATE_HOME/mfconnector`` (``~/.local/state``).

These are ``platformdirs``' answers (user cache and user state directories, no app author).
The answer is computed from the ``env`` mapping the caller passes (so a server started with a
different environment, and the tests, get the directory that environment names); when the
variable that decides it is missing or not absolute, ``platformdirs`` asks the operating
system (on Windows the known-folder API). Nothing is created here: callers create what they
use, private to the user. No third-party import at module level: this sits on start-up paths.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path, PureWindowsPath

__all__ = ["APP_NAME", "CACHE_FILE_NAME", "default_cache_path", "default_state_dir"]

APP_NAME = "mfconnector"
CACHE_FILE_NAME = "token_cache.json"


def _absolute(value: str | None, platform: str) -> bool:
    if not value:
        return False
    if platform == "win32":
        return PureWindowsPath(value).is_absolute()
    return value.startswith("/")


def _home(env: Mapping[str, str]) -> Path:
    home = env.get("HOME") or env.get("USERPROFILE")
    return Path(home) if home else Path.home()


def _windows_local(env: Mapping[str, str]) -> Path:
    local = env.get("LOCALAPPDATA")
    if _absolute(local, "win32"):
        return Path(str(local))
    import platformdirs

    # user_data_dir(roaming=False) is the local application data folder itself.
    return Path(platformdirs.user_data_dir(appname=None, appauthor=False, roaming=False))


def default_cache_path(env: Mapping[str, str], *, platform: str = sys.platform) -> Path:
    """The token cache file for this platform (see the module table)."""
    if platform == "win32":
        return _windows_local(env) / APP_NAME / "Cache" / CACHE_FILE_NAME
    if platform == "darwin":
        return _home(env) / "Library" / "Caches" / APP_NAME / CACHE_FILE_NAME
    xdg = env.get("XDG_CACHE_HOME")
    base = Path(str(xdg)) if _absolute(xdg, platform) else _home(env) / ".cache"
    return base / APP_NAME / CACHE_FILE_NAME


def default_state_dir(env: Mapping[str, str], *, platform: str = sys.platform) -> Path:
    """The directory for durable local state (stores, keys), per platform; not created."""
    if platform == "win32":
        return _windows_local(env) / APP_NAME
    if platform == "darwin":
        return _home(env) / "Library" / "Application Support" / APP_NAME
    xdg = env.get("XDG_STATE_HOME")
    base = Path(str(xdg)) if _absolute(xdg, platform) else _home(env) / ".local" / "state"
    return base / APP_NAME
