"""The sign-in settings as the entry point reads them: sign-in's own flags, plus the
permissions of the gates the operator opened (``auth`` knows permissions, not gates)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping

from mfconnector.auth.config import AuthConfig, auth_config_from_args
from mfconnector.graph.scopes import scopes_for
from mfconnector.limits import DEFAULT_LIMITS, Limits
from mfconnector.writes.gates import Gates, gates_from_args

__all__ = ["sign_in_config"]


def sign_in_config(
    args: argparse.Namespace,
    env: Mapping[str, str] = os.environ,
    *,
    gates: Gates | None = None,
    limits: Limits = DEFAULT_LIMITS,
) -> AuthConfig:
    """Flags over environment over defaults, asking also for what the open gates need
    (``login --enable-send`` consents to Mail.Send); the gates come from the same flags and
    environment unless given. ``limits`` are the server's (a sign-in command has none of its
    own and takes the defaults)."""
    gates = gates_from_args(args, env) if gates is None else gates
    return auth_config_from_args(
        args, env, extra_scopes=scopes_for(gates.names), gate_flags=gates.flags, limits=limits
    )
