"""Safeforge stands alone: a clone with nothing beside it, and an installed wheel, read every
source's sample, check a task and generate tasks against the replay server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from tests_paths import REPO

SOURCES = ("neiss", "normbank", "bddl", "virtualhome", "alfred")


def run(args: list[str], *, cwd: Path, pythonpath: Path, env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "SAFEFORGE_OUTPUTS"))}
    environment.update(env or {}, PYTHONPATH=str(pythonpath))
    return subprocess.run([sys.executable, *args], cwd=cwd, env=environment, capture_output=True, text=True, timeout=timeout)


def start_replay_server(cwd: Path, pythonpath: Path) -> tuple[subprocess.Popen, str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "safeforge.llm.replay_server", "--port", "0"],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(pythonpath)},
        stdout=subprocess.PIPE,
        text=True,
    )
    first = process.stdout.readline()
    return process, first.split(" on ")[-1].strip()


def exercise(where: Path, pythonpath: Path, task: Path) -> None:
    """Every source's default sample, a task check, and generate on two NEISS records."""
    for source in SOURCES:
        shown = run(["-m", "safeforge.cli", "sources", "show", source, "--limit", "1", "--json"], cwd=where, pythonpath=pythonpath)
        assert shown.returncode == 0, shown.stderr
        [record] = [json.loads(line) for line in shown.stdout.splitlines()]
        assert record["origin"].startswith(f"{source}@sample/")  # a dataset, not a path of this machine
    checked = run(["-m", "safeforge.cli", "task", "check", str(task)], cwd=where, pythonpath=pythonpath)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    server, url = start_replay_server(where, pythonpath)
    try:
        generated = run(
            ["-m", "safeforge.cli", "generate", "neiss", "--limit", "2", "--offset", "1", "--run", "lone", "--json"],
            cwd=where,
            pythonpath=pythonpath,
            env={"OPENAI_BASE_URL": url, "SAFEFORGE_MODEL": "deepseek-chat"},
        )
    finally:
        server.terminate()
        server.wait(timeout=10)
    assert generated.returncode == 0, generated.stderr
    summary = json.loads(generated.stdout)
    assert summary["states"] == {"checked": 1, "no_danger": 1}
    assert (where / "outputs" / "lone" / "tasks" / "neiss_220705908" / "metadata.json").is_file()


def install(source: Path, site: Path, *extra: str) -> Path:
    """Build `source`'s wheel and install it (and `extra` distributions) into the folder `site`."""
    dist = site.parent / f"{site.name}-dist"
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(dist), str(source)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert built.returncode == 0, built.stderr
    [wheel] = list(dist.glob("safeforge-*.whl"))
    installed = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(site), str(wheel), *extra],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert installed.returncode == 0, installed.stderr
    return wheel


@pytest.mark.slow
def test_a_clone_with_nothing_beside_it_works(tmp_path):
    lone = tmp_path / "empty" / "safeforge"
    lone.parent.mkdir()
    subprocess.run(["git", "clone", "--quiet", str(REPO), str(lone)], check=True, timeout=120)
    assert sorted(p.name for p in lone.parent.iterdir()) == ["safeforge"]
    site = tmp_path / "site"
    install(lone, site)
    exercise(lone, site, lone / "examples" / "tasks" / "bathroom_bleach_bucket")


# Distributions on PyPI that install the top-level names of our folders (pipeline, flows,
# review.py, sources.py); prompts installs nothing importable but takes the distribution name.
CLASHING = ("pipeline==0.1.0", "sources==1.1.0", "review==1510", "flows==1.2.1", "prompts==0.0.1")


@pytest.mark.slow
def test_an_installed_wheel_carries_every_file_it_reads(tmp_path):
    """One installed name: the wheel lands as `safeforge` only, beside PyPI's `pipeline`, `sources`,
    `review`, `flows` and `prompts`, and every file it reads is inside it."""
    site = tmp_path / "site"
    names = set(zipfile.ZipFile(install(REPO, site, *CLASHING)).namelist())
    assert {name.split("/")[0] for name in names} == {"safeforge", "safeforge-0.1.0.dist-info"}
    for expected in (
        "safeforge/prompts/extract_danger.md",
        "safeforge/prompts/eval_implicit.md",
        "safeforge/review/labeling_config.xml",
        "safeforge/workbench/templates/sections.html",
        "safeforge/workbench/static/workbench.js",
        "safeforge/workbench/static/workbench.css",
        "safeforge/templates/new_task/safety_domain.pddl",
        "safeforge/spoc/ai2thor_types.json",
        "safeforge/spoc/scenes.json",
        "safeforge/llm/replay_responses/neiss_220705908.json",
        "safeforge/despite_import/standin/src/planner/solver.py",
        "safeforge/sources/samples/neiss/holdout_labeled.csv",
        "safeforge/sources/samples/neiss/SOURCE.txt",
        "safeforge/sources/samples/alfred/LICENSE",
    ):
        assert expected in names, expected
    elsewhere = tmp_path / "work"
    elsewhere.mkdir()
    where = run(
        [
            "-c",
            "import importlib.util, safeforge, safeforge.sources\n"
            "print(safeforge.__file__, safeforge.sources.__file__)\n"
            "print(*(importlib.util.find_spec(name).origin for name in ('pipeline', 'flows', 'review', 'sources')))",
        ],
        cwd=elsewhere,
        pythonpath=site,
    )
    assert where.returncode == 0, where.stderr
    ours, theirs = (line.split() for line in where.stdout.splitlines())
    assert all(path.startswith(str(site / "safeforge")) for path in ours), ours
    assert len(theirs) == 4 and not any("safeforge" in path for path in theirs), theirs  # theirs, untouched
    environment = {**os.environ, "PYTHONPATH": str(site)}
    helped = subprocess.run([str(site / "bin" / "safeforge"), "--help"], cwd=elsewhere, env=environment, capture_output=True, text=True)
    assert helped.returncode == 0 and "generate" in helped.stdout, helped.stderr
    new = run(["-m", "safeforge.cli", "task", "new", "scaffold"], cwd=elsewhere, pythonpath=site)
    assert new.returncode == 0, new.stderr
    exercise(elsewhere, site, elsewhere / "scaffold")
