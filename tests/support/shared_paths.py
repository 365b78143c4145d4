"""Where the project's shared folder is: beside the repository first, then the workplace's.

CI runs in a fresh clone with ``shared/`` copied beside it; a developer's worktree may sit
elsewhere, with the workplace copy at /work/shared.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["GRAPH_SAMPLES", "SHARED"]

REPO_ROOT = Path(__file__).resolve().parents[2]
CANDIDATES = (REPO_ROOT.parent / "shared", Path("/work/shared"))


def _shared() -> Path:
    for candidate in CANDIDATES:
        if (candidate / "graph-samples").is_dir():
            return candidate
    looked = " and ".join(str(candidate) for candidate in CANDIDATES)
    raise FileNotFoundError(
        f"the shared folder with graph-samples/ is missing (looked in {looked})"
    )


SHARED = _shared()
GRAPH_SAMPLES = SHARED / "graph-samples"
