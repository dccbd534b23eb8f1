"""Where the real source samples are: ``<repo>/../shared/sources`` (CI clones the repo beside shared/)."""
from __future__ import annotations

from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
SHARED_SOURCES = (REPO_ROOT / ".." / "shared" / "sources").resolve()


@pytest.fixture(scope="session")
def shared_sources() -> Path:
    return SHARED_SOURCES


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT
