"""Fixtures of the workbench tests: Chromium, and task folders to serve."""

from __future__ import annotations

import shutil

import pytest

from tests.doubles.review_browser import find_chromium


@pytest.fixture(scope="module")
def chromium() -> str:
    path = find_chromium()
    if path is None:
        if shutil.which("apt-get") is None:
            pytest.skip("chromium is not installed, and this machine has no apt-get to install it with")
        pytest.fail("chromium is not installed (CI runs scripts/setup.sh, which installs it)")
    return path
