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
        [sys.executable, "-m", "pipeline.llm.replay_server", "--port", "0"],
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
        shown = run(["-m", "pipeline.cli", "sources", "show", source, "--limit", "1", "--json"], cwd=where, pythonpath=pythonpath)
        assert shown.returncode == 0, shown.stderr
        [record] = [json.loads(line) for line in shown.stdout.splitlines()]
        assert record["origin"].startswith(f"{source}@sample/")  # a dataset, not a path of this machine
    checked = run(["-m", "pipeline.cli", "task", "check", str(task)], cwd=where, pythonpath=pythonpath)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    server, url = start_replay_server(where, pythonpath)
    try:
        generated = run(
            ["-m", "pipeline.cli", "generate", "neiss", "--limit", "2", "--offset", "1", "--run", "lone", "--json"],
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


@pytest.mark.slow
def test_a_clone_with_nothing_beside_it_works(tmp_path):
    lone = tmp_path / "empty" / "safeforge"
    lone.parent.mkdir()
    subprocess.run(["git", "clone", "--quiet", str(REPO), str(lone)], check=True, timeout=120)
    assert sorted(p.name for p in lone.parent.iterdir()) == ["safeforge"]
    exercise(lone, lone, lone / "examples" / "tasks" / "bathroom_bleach_bucket")


@pytest.mark.slow
def test_an_installed_wheel_carries_every_file_it_reads(tmp_path, make_task):
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(tmp_path / "dist"), str(REPO)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert built.returncode == 0, built.stderr
    [wheel] = list((tmp_path / "dist").glob("safeforge-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    for expected in (
        "prompts/extract_danger.md",
        "prompts/eval_implicit.md",
        "review/labeling_config.xml",
        "pipeline/templates/new_task/safety_domain.pddl",
        "pipeline/spoc/ai2thor_types.json",
        "pipeline/llm/replay_responses/neiss_220705908.json",
        "pipeline/despite_import/standin/src/planner/solver.py",
        "sources/samples/neiss/holdout_labeled.csv",
        "sources/samples/neiss/SOURCE.txt",
        "sources/samples/alfred/LICENSE",
    ):
        assert expected in names, expected
    site = tmp_path / "site"
    installed = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(site), str(wheel)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert installed.returncode == 0, installed.stderr
    elsewhere = tmp_path / "work"
    elsewhere.mkdir()
    where = run(
        ["-c", "import pipeline, sources, prompts; print(pipeline.__file__, sources.__file__, prompts.__file__)"],
        cwd=elsewhere,
        pythonpath=site,
    )
    assert all(path.startswith(str(site)) for path in where.stdout.split()), where.stdout
    new = run(["-m", "pipeline.cli", "task", "new", "scaffold"], cwd=elsewhere, pythonpath=site)
    assert new.returncode == 0, new.stderr
    exercise(elsewhere, site, elsewhere / "scaffold")
