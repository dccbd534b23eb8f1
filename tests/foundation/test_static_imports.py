"""Static tools see the code as installed: basedpyright (pyright, the engine of editors' Python
support) finds no error in the package in the development install scripts/setup.sh makes, and that
install's tree of links is found out of date when a module is added or removed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from install_tree import stale_entries
from tests_paths import REPO

PACKAGE_FOLDERS = ["pipeline", "sources", "review", "flows", "prompts"]


@pytest.mark.slow
def test_pyright_finds_no_error_in_the_package():
    """No error of any kind: no unresolved import, no name a package does not export (`__all__`),
    no type error."""
    pyright = Path(sys.executable).with_name("basedpyright")
    done = subprocess.run(
        [str(pyright), "--outputjson", "--pythonpath", sys.executable, *PACKAGE_FOLDERS],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    report = json.loads(done.stdout)
    errors = [
        f"{d['file']}:{d['range']['start']['line'] + 1}: {d.get('rule', '')} {d['message']}"
        for d in report["generalDiagnostics"]
        if d["severity"] == "error"
    ]
    assert not errors, "\n".join(errors)
    assert report["summary"]["filesAnalyzed"] > 150


def test_an_install_tree_is_stale_when_a_module_is_added_or_removed(tmp_path):
    repo, tree = tmp_path / "repo", tmp_path / "tree" / "safeforge"
    folders = {"pipeline": "", "sources": "sources"}
    for relative in ("pipeline/__init__.py", "pipeline/runs/ledger.py", "sources/__init__.py"):
        folder, inside = relative.split("/", 1)
        link = tree / folders[folder] / inside
        (repo / relative).parent.mkdir(parents=True, exist_ok=True)
        (repo / relative).write_text("")
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(repo / relative)
    assert stale_entries(repo, tree, folders) == []

    (repo / "pipeline/runs/record_state.py").write_text("")
    (repo / "sources/__init__.py").unlink()
    assert stale_entries(repo, tree, folders) == ["pipeline/runs/record_state.py", "sources/__init__.py (removed)"]
