"""How a tool says how far along it is: ``mfconnector.reporting``, which the backends use
too (a backend reports bytes uploaded without knowing about tools)."""

from __future__ import annotations

from mfconnector.reporting import ReportProgress, report_progress, reporting_to

__all__ = ["ReportProgress", "report_progress", "reporting_to"]
