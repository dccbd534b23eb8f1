"""Where the bundled samples live: ``<repo>/../shared/sources`` (override: SAFEFORGE_SHARED_SOURCES)."""
from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]


def shared_sources() -> Path:
    """The directory holding the real source samples (one sub-directory per source)."""
    override = os.environ.get("SAFEFORGE_SHARED_SOURCES")
    return Path(override) if override else (REPO_ROOT / ".." / "shared" / "sources").resolve()
