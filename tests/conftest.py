"""Shared test fixtures: locations of the bundled data, and task folders to work on."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

# lets test modules import tests_paths
sys.path.append(str(Path(__file__).parent))

from tests_paths import EXAMPLES, TEMPLATE  # noqa: E402


@pytest.fixture(autouse=True, scope="session")
def _own_data_folder(tmp_path_factory):
    """Full datasets a developer fetched must not change what the tests read: SAFEFORGE_DATA points
    at an empty folder of the test session (subprocesses inherit it)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SAFEFORGE_DATA", str(tmp_path_factory.mktemp("safeforge-data")))
        yield


@pytest.fixture
def make_task(tmp_path):
    """Write a task folder from PDDL text (defaults: the `task new` scaffold) and return its path."""

    def make(domain: str | None = None, problem: str | None = None, name: str = "t", metadata: str | None = None) -> Path:
        folder = tmp_path / name
        folder.mkdir()
        for filename, text in (("safety_domain.pddl", domain), ("safety_problem.pddl", problem), ("metadata.json", metadata)):
            if text is None:
                text = (TEMPLATE / filename).read_text().replace("__NAME__", name)
            (folder / filename).write_text(text)
        return folder

    return make


@pytest.fixture
def example_copy(tmp_path):
    """A copy of an example task that a test may change."""

    def copy(name: str) -> Path:
        return Path(shutil.copytree(EXAMPLES / name, tmp_path / name))

    return copy
