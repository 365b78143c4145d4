"""The tool registry: an explicit, ordered list, identical in every era."""

from __future__ import annotations

from mfconnector.tools.account import ACCOUNT_STATUS
from mfconnector.tools.base import Tool

__all__ = ["ALL_TOOLS", "Tool"]

ALL_TOOLS: tuple[Tool, ...] = (ACCOUNT_STATUS,)
