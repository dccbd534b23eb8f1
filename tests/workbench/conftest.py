"""Fixtures of the workbench tests."""

from __future__ import annotations

import pytest

from tests.doubles.review_browser import require_chromium


@pytest.fixture(scope="module")
def chromium() -> str:
    return require_chromium()
