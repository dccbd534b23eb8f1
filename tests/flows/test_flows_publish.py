"""Flow `publish` under prefect_test_harness: folders of task folders (e.g. import-despite outputs)
are released as the command line releases them, beside runs or alone; a folder that is not there is
named."""

from __future__ import annotations

import json
import shutil

import pytest
from prefect.testing.utilities import prefect_test_harness
from tests_paths import EXAMPLES

from safeforge.flows.publish import publish

TASKS = ("bathroom_bleach_bucket", "teen_desk_diary_trust")


@pytest.fixture(scope="module")
def harness():
    with prefect_test_harness(server_startup_timeout=120):
        yield


def test_a_folder_of_tasks_is_released_by_the_flow(harness, tmp_path, monkeypatch):
    monkeypatch.setenv("SAFEFORGE_OUTPUTS", str(tmp_path / "outputs"))
    for name in TASKS:
        shutil.copytree(EXAMPLES / name, tmp_path / "outputs" / "imported" / name)
    shutil.copytree(EXAMPLES / "care_home_bad_news", tmp_path / "elsewhere" / "care_home_bad_news")

    result = publish("v1", folders=["imported", str(tmp_path / "elsewhere")])

    assert sorted(result["tasks"]) == sorted([*TASKS, "care_home_bad_news"])
    release = json.loads((tmp_path / "outputs" / "releases" / "v1" / "release.json").read_text())
    assert sorted(t["task_id"] for t in release["tasks"]) == sorted(result["tasks"])


def test_a_missing_folder_is_named(harness, tmp_path, monkeypatch):
    monkeypatch.setenv("SAFEFORGE_OUTPUTS", str(tmp_path / "outputs"))
    with pytest.raises(ValueError, match=r"no folder of tasks 'nowhere' \(looked for .*outputs/nowhere\)"):
        publish("v1", folders=["nowhere"])
    assert not (tmp_path / "outputs" / "releases").exists()
