"""Publishing to a Hub-compatible server (ours, on loopback) with the real huggingface_hub and
datasets clients, and loading the release back with load_dataset.

The clients read HF_ENDPOINT when they are imported, and other tests in this pytest process
may have imported them already, so every client runs in a subprocess with the environment set
from the start. The server runs in a thread of this process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests_paths import REPO

from tests.doubles.hub_server import running_hub_server

SENTINEL = "hf_sentinel_token_5e1d9c"


def _env(endpoint: str, home: Path, token: str | None) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE_"))}
    env.update(
        HF_ENDPOINT=endpoint,
        HF_HUB_DISABLE_XET="1",
        HF_HUB_OFFLINE="0",
        HF_HOME=str(home),
        HF_HUB_DISABLE_PROGRESS_BARS="1",
    )
    if token is not None:
        env["HF_TOKEN"] = token
    return env


def _run(args: list[str], env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)


def _all_bytes_under(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file())


@pytest.fixture
def hub(tmp_path):
    with running_hub_server(tmp_path / "hub", token=SENTINEL) as url:
        yield url


def test_publish_to_the_hub_and_load_it_back(make_run, tmp_path, hub):
    run = make_run(
        "hubrun",
        [("teen_desk_diary_trust", "neiss_1", "neiss", True), ("care_home_bad_news", "neiss_2", "neiss", False)],
        rejected={"no_danger": 1},
    )
    env = _env(hub, tmp_path / "hf_home", SENTINEL)
    out = tmp_path / "release"

    published = _run(
        ["-m", "safeforge.cli", "publish", str(run), "--version", "v1.0.0", "--out", str(out), "--repo-id", "safeforge/tasks"], env
    )
    assert published.returncode == 0, published.stderr
    assert f"pushed: {hub}/datasets/safeforge/tasks/tree/v1.0.0" in published.stdout

    loaded = _run([str(Path(__file__).parent / "hub_load_back.py"), "safeforge/tasks", "v1.0.0"], env)
    assert loaded.returncode == 0, loaded.stderr
    found = json.loads(loaded.stdout.strip().splitlines()[-1])
    assert found["task_ids"] == ["neiss_1", "neiss_2"]
    assert found["features_match"] is True
    assert found["safe_plan_lengths"] == [6, 4]
    assert found["tags"] == ["v1.0.0"]
    assert found["card_license"] == "mit"  # the Hub's own reading of the card's metadata
    assert "license:mit" in found["hub_tags"] and "pddl" in found["hub_tags"]
    assert found["card"] == (out / "README.md").read_text()
    assert "| extract | 3 | 2 | 66.7% |" in found["card"]
    assert set(found["files"]) >= {"README.md", "data/train-00000-of-00001.parquet", "tasks.tar.gz", "release.json", "plots/source.png"}

    again = _run(
        [
            "-m",
            "safeforge.cli",
            "publish",
            str(run),
            "--version",
            "v1.0.0",
            "--out",
            str(tmp_path / "release_again"),
            "--repo-id",
            "safeforge/tasks",
        ],
        env,
    )
    assert again.returncode == 2
    assert "safeforge/tasks: version v1.0.0 is already published" in again.stderr
    assert not (tmp_path / "release_again").exists()

    for output in (published.stdout, published.stderr, loaded.stdout, loaded.stderr, again.stderr):
        assert SENTINEL not in output
    assert SENTINEL.encode() not in _all_bytes_under(out)
    assert SENTINEL.encode() not in _all_bytes_under(tmp_path / "hub")


def test_a_refused_push_leaves_no_release_behind(make_run, tmp_path, hub):
    run = make_run("badtoken", [("teen_desk_diary_trust", "neiss_1", "neiss", False)])
    out = tmp_path / "releases" / "v1"

    wrong = _run(
        ["-m", "safeforge.cli", "publish", str(run), "--version", "v1", "--out", str(out), "--repo-id", "safeforge/tasks"],
        _env(hub, tmp_path / "hf_home", "hf_wrong_token"),
    )
    assert wrong.returncode == 2
    assert "the Hub refused the release (HTTP 401)" in wrong.stderr
    assert "hf_wrong_token" not in wrong.stderr + wrong.stdout
    assert not out.exists() and list(out.parent.iterdir()) == []

    missing = _run(
        ["-m", "safeforge.cli", "publish", str(run), "--version", "v1", "--out", str(out), "--repo-id", "safeforge/tasks"],
        _env(hub, tmp_path / "hf_home", None),
    )
    assert missing.returncode == 2 and "HF_TOKEN is not set" in missing.stderr
    assert not out.exists()


def test_tasks_made_from_replayed_responses_reach_the_hub_only_when_allowed(make_run, tmp_path, hub):
    run = make_run("replayrun", [("teen_desk_diary_trust", "neiss_1", "neiss", True)])
    metadata_path = run / "tasks" / "neiss_1" / "metadata.json"
    metadata = json.loads(metadata_path.read_text())
    metadata["provenance"]["llm_endpoint"] = "replay"
    metadata_path.write_text(json.dumps(metadata))
    env = _env(hub, tmp_path / "hf_home", SENTINEL)
    command = ["-m", "safeforge.cli", "publish", str(run), "--version", "v1.0.0", "--repo-id", "safeforge/replayed"]

    refused = _run([*command, "--out", str(tmp_path / "refused")], env)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert "1 task(s) (neiss_1) were generated from the replay server's hand-written responses" in refused.stderr
    assert "--allow-replay" in refused.stderr and not (tmp_path / "refused").exists()

    allowed = _run([*command, "--out", str(tmp_path / "allowed"), "--allow-replay"], env)
    assert allowed.returncode == 0, allowed.stderr
    card = (tmp_path / "allowed" / "README.md").read_text()
    assert "1 of the 1 tasks were generated from hand-written responses" in card and "not a real cost" in card
