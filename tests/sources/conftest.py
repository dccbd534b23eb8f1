"""The bundled source samples (``sources/samples/<source>/``), as a fixture."""

from __future__ import annotations

from pathlib import Path

import pytest

from safeforge.sources.paths import sample_path


@pytest.fixture(scope="session")
def samples() -> Path:
    return sample_path()
