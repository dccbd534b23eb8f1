"""Publishing to a Hub-compatible server (ours, on loopback) with the real huggingface_hub and
datasets clients, and reading the release back as its users do.

The clients read HF_ENDPOINT when they are imported, and other tests in this pytest process
may have imported them already, so every client runs in a subprocess with the environment set
from the start. The server runs in a thread of this process.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import httpx
from conftest import HUB_TOKEN, leaks
from tests_paths import EXAMPLES, REPO

PUBLISH = ["-m", "safeforge.cli", "publish"]


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


def test_replayed_runs_reach_the_hub_only_when_allowed_and_read_back_whole(reviewed_runs, tmp_path, hub):
    env = _env(hub, tmp_path / "hf_home", HUB_TOKEN)
    command = [
        *PUBLISH,
        *map(str, reviewed_runs),
        "--version",
        "v1.0.0",
        "--repo-id",
        "safeforge/tasks",
        "--licence-acknowledged",
        "virtualhome",
    ]

    refused = _run([*command, "--out", str(tmp_path / "refused")], env)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert "12 task(s) (alfred_trial_T20190906_201143_149707, " in refused.stderr
    assert "were generated from the replay server's hand-written responses, not a model's" in refused.stderr
    assert "--allow-replay" in refused.stderr and not (tmp_path / "refused").exists()

    out = tmp_path / "release"
    published = _run([*command, "--out", str(out), "--allow-replay"], env)
    assert published.returncode == 0, published.stderr
    assert f"pushed: {hub}/datasets/safeforge/tasks/tree/v1.0.0" in published.stdout
    assert "warning: 12 task(s) are not known to be a model's work" in published.stderr

    snapshot = tmp_path / "snapshot"
    loaded = _run([str(Path(__file__).parent / "hub_load_back.py"), "safeforge/tasks", "v1.0.0", str(snapshot)], env)
    assert loaded.returncode == 0, loaded.stderr
    found = json.loads(loaded.stdout.strip().splitlines()[-1])
    assert len(found["task_ids"]) == 12 and set(found["llm_endpoints"]) == {"replay"}
    assert found["features_match"] is True
    assert found["tags"] == ["v1.0.0"]
    assert found["card_license"] == "cc-by-sa-4.0"  # the Hub's own reading of the card's metadata
    assert "license:cc-by-sa-4.0" in found["hub_tags"] and "pddl" in found["hub_tags"]
    assert found["card"] == (out / "README.md").read_text()
    assert "**Not a model's work.** 12 of the 12 tasks" in found["card"]
    assert set(found["files"]) >= {"README.md", "data/train-00000-of-00001.parquet", "tasks.tar.gz", "release.json", "plots/source.png"}
    assert leaks(snapshot, tmp_path, *reviewed_runs) == []  # every byte a user downloads

    again = _run([*command, "--out", str(tmp_path / "again"), "--allow-replay"], env)
    assert again.returncode == 2
    assert "safeforge/tasks: version v1.0.0 is already published" in again.stderr
    assert not (tmp_path / "again").exists()
    for output in (published.stdout, published.stderr, loaded.stdout, loaded.stderr, again.stderr):
        assert HUB_TOKEN not in output
    assert HUB_TOKEN.encode() not in _all_bytes_under(out)
    assert HUB_TOKEN.encode() not in _all_bytes_under(tmp_path / "hub")


def test_a_refused_push_leaves_no_release_behind(tmp_path, hub):
    folder = tmp_path / "tasks"
    shutil.copytree(EXAMPLES / "teen_desk_diary_trust", folder / "teen_desk_diary_trust")
    out = tmp_path / "releases" / "v1"
    command = [*PUBLISH, str(folder), "--version", "v1", "--out", str(out), "--repo-id", "safeforge/tasks"]

    wrong = _run(command, _env(hub, tmp_path / "hf_home", "hf_wrong_token"))
    assert wrong.returncode == 2
    assert "the Hub refused the release (HTTP 401)" in wrong.stderr
    assert "hf_wrong_token" not in wrong.stderr + wrong.stdout
    assert not out.exists() and list(out.parent.iterdir()) == []

    missing = _run(command, _env(hub, tmp_path / "hf_home", None))
    assert missing.returncode == 2 and "HF_TOKEN is not set" in missing.stderr
    assert not out.exists()


CARD_CHECKS = """
import sys
from huggingface_hub import DatasetCard, HfApi

def card(licence):
    return DatasetCard(f"---\\nlicense: {licence}\\n---\\n# tasks\\n")

card("cc-by-sa-4.0").validate(repo_type="dataset")
try:
    card("not-a-licence").validate(repo_type="dataset")
    sys.exit("validate-yaml accepted an unknown licence")
except ValueError as exc:
    print("validate:", str(exc))
api = HfApi()
api.create_repo("safeforge/cards", repo_type="dataset")
try:
    api.upload_file(
        path_or_fileobj=str(card("not-a-licence")).encode(), path_in_repo="README.md", repo_id="safeforge/cards", repo_type="dataset"
    )
    sys.exit("a card with an unknown licence was committed")
except ValueError as exc:
    print("upload:", " ".join(str(exc).split()))
api.upload_file(path_or_fileobj=str(card("mit")).encode(), path_in_repo="README.md", repo_id="safeforge/cards", repo_type="dataset")
print("mit: committed")
"""


def _commit_readme(hub: str, text: str) -> httpx.Response:
    """A commit of README.md as raw ndjson, as a client that skips the card check sends it."""
    lines = [
        {"key": "header", "value": {"summary": "card"}},
        {"key": "file", "value": {"path": "README.md", "content": base64.b64encode(text.encode()).decode(), "encoding": "base64"}},
    ]
    return httpx.post(
        f"{hub}/api/datasets/safeforge/cards/commit/main",
        content="\n".join(json.dumps(line) for line in lines),
        headers={"Authorization": f"Bearer {HUB_TOKEN}", "Content-Type": "application/x-ndjson"},
    )


def test_the_hub_server_rejects_licences_the_hub_does_not_know(tmp_path, hub):
    checked = _run(["-c", CARD_CHECKS], _env(hub, tmp_path / "hf_home", HUB_TOKEN))
    assert checked.returncode == 0, checked.stderr + checked.stdout
    validate, upload, committed = checked.stdout.splitlines()
    assert validate.startswith('validate: - Error: "license" must be one of [apache-2.0, mit, openrail, ')
    assert upload.startswith('upload: Invalid metadata in README.md. - "license" must be one of [apache-2.0, mit, ')
    assert committed == "mit: committed"
    refused = _commit_readme(hub, "---\nlicense: not-a-licence\n---\n")
    assert refused.status_code == 400
    assert refused.headers["X-Error-Message"].startswith('Invalid metadata in README.md. - "license" must be one of [')
    assert _commit_readme(hub, "---\nlicense: [mit, cc-by-4.0]\n---\n").status_code == 200
