"""On/off settings from the environment (``MFC_ENABLE_SEND=1``), read one way. Pure code.

``1 true yes on`` and ``0 false no off`` (any case, spaces around ignored; empty is off).
Anything else is refused rather than guessed: ``MFC_ENABLE_SEND=maybe`` must not open a
gate, and ``MFC_APP_ONLY=flase`` must not silently mean delegated.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["FALSE_WORDS", "TRUE_WORDS", "EnvFlagError", "env_flag"]

TRUE_WORDS = frozenset({"1", "true", "yes", "on"})
FALSE_WORDS = frozenset({"0", "false", "no", "off", ""})


class EnvFlagError(ValueError):
    """A flag variable holding neither word; the message names it and what it may be."""


def env_flag(env: Mapping[str, str], name: str) -> bool | None:
    """``env[name]`` as on or off; None when it is unset, :class:`EnvFlagError` when it is
    neither (the value is shown cut to 20 characters)."""
    raw = env.get(name)
    if raw is None:
        return None
    value = raw.strip().lower()
    if value in TRUE_WORDS:
        return True
    if value in FALSE_WORDS:
        return False
    raise EnvFlagError(f"{name} must be 1 or 0 (true/false), not {raw[:20]!r}")
