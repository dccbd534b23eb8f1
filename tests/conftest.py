"""Shared test fixtures: locations of the bundled data, and task folders to work on."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

# lets test modules import tests_paths
sys.path.append(str(Path(__file__).parent))

from install_tree import folders_in_tree, stale_entries  # noqa: E402
from tests_paths import EXAMPLES, REPO, TEMPLATE  # noqa: E402


def pytest_sessionstart(session):
    """Stop at once, saying what to run, when the strict editable install (a tree of links made at
    install time) no longer mirrors the checkout: a module added since would fail to import."""
    import safeforge

    tree = Path(safeforge.__file__).parent
    if not (tree / "__init__.py").is_symlink():
        return  # a wheel, or an editable install of another kind
    stale = stale_entries(REPO, tree, folders_in_tree(REPO / "pyproject.toml"))
    if stale:
        shown = ", ".join(stale[:5]) + (f" and {len(stale) - 5} more" if len(stale) > 5 else "")
        pytest.exit(f"the development install is out of date ({shown}): run bash scripts/setup.sh again", returncode=4)


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
