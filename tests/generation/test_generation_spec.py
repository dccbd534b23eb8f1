"""A run records what made it (run.json) and refuses to be resumed under something else, as a user
meets it: `safeforge generate` and `safeforge runs show` in subprocesses, against the replay server."""

from __future__ import annotations

import importlib.metadata
import json
import shutil
import subprocess

from test_generation_cli import clean_env, safeforge
from tests_paths import REPO

from safeforge.llm.prompts import prompts_dir

# NEISS sample row 2: a NO_DANGER record (one extract call)
RUN = ("generate", "neiss", "--offset", "1", "--limit", "1", "--run", "r")


def test_a_run_records_its_spec_and_refuses_a_resume_under_another(tmp_path, replay_server):
    env = clean_env(OPENAI_BASE_URL=replay_server(), SAFEFORGE_MODEL="deepseek-chat", SAFEFORGE_OUTPUTS=str(tmp_path))
    first = safeforge(*RUN, env=env)
    assert first.returncode == 0, first.stderr
    spec_file = tmp_path / "r" / "run.json"
    document = json.loads(spec_file.read_text())
    spec = document["spec"]
    assert spec["models"] == {"extract": "deepseek-chat", "generate": "deepseek-chat", "judge": "deepseek-chat"}
    assert set(spec["prompts"]) == {"extract", "generate", "feedback", "judge"}
    assert spec["settings"]["max_rounds"] == 5 and spec["settings"]["generate_temperature"] == 1.0
    (made,) = document["invocations"]
    assert made["options"]["source"] == "neiss" and made["options"]["limit"] == 1
    assert made["executor"] == {"name": "local"}
    assert made["code"]["safeforge"] == importlib.metadata.version("safeforge")
    head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True, check=False).stdout.strip()
    assert made["code"]["git"] == (head or None)  # the checkout's revision (its files, linked by a strict editable install)
    assert made["dependencies"]["openai"] == importlib.metadata.version("openai")

    # other options and another prompt: refused, every difference named, nothing run
    prompts = tmp_path / "prompts"
    shutil.copytree(prompts_dir(), prompts)
    extract = prompts / "extract_danger.md"
    extract.write_text(extract.read_text() + "\nBe brief.\n")
    changed_env = {**env, "SAFEFORGE_PROMPTS": str(prompts)}
    refused = safeforge(*RUN, "--max-rounds", "3", env=changed_env)
    assert refused.returncode == 2
    assert "run r was made with a different spec" in refused.stderr
    assert (
        "prompts.extract: " in refused.stderr and "settings.max_rounds: 5 -> 3" in refused.stderr and "--accept-changes" in refused.stderr
    )
    assert json.loads(spec_file.read_text()) == document

    # the user says to go on: the spec becomes the new one, the invocation lists the changes
    accepted = safeforge(*RUN, "--max-rounds", "3", "--accept-changes", env=changed_env)
    assert accepted.returncode == 0, accepted.stderr
    document = json.loads(spec_file.read_text())
    assert document["spec"]["settings"]["max_rounds"] == 3
    changes = document["invocations"][-1]["changes"]
    assert [change.split(":")[0] for change in changes] == ["prompts.extract", "settings.max_rounds"]

    # a run made before run.json: resumed, and its spec recorded from then on
    spec_file.unlink()
    old = safeforge(*RUN, env=env)
    assert old.returncode == 0, old.stderr
    assert "earlier records is unknown" in json.loads(spec_file.read_text())["invocations"][0]["note"]

    shown = safeforge("runs", "show", "r", env=env)
    assert shown.returncode == 0, shown.stderr
    assert "made with (run.json, 1 invocation(s)):" in shown.stdout
    assert "models    extract deepseek-chat, generate deepseek-chat, judge deepseek-chat" in shown.stdout
    assert "executor local" in shown.stdout
