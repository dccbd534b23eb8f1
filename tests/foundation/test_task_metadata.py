"""The typed contract of metadata.json: old folders load, nothing unknown is lost, checks are pure,
one writer, and every problem is named with the file and the field."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from tests_paths import REPO

from safeforge.task.checks import check_task, record_check
from safeforge.task.files import TaskError, read_metadata
from safeforge.task.folder import Task
from safeforge.task.metadata import SCHEMA_VERSION, TaskMetadata, json_schema

EXAMPLES = REPO / "examples" / "tasks"


def _copy(tmp_path, name="bathroom_bleach_bucket"):
    target = tmp_path / name
    shutil.copytree(EXAMPLES / name, target)
    return target


def test_a_folder_written_before_schema_versions_loads_and_is_upgraded_when_written(tmp_path):
    folder = _copy(tmp_path)
    old = json.loads((folder / "metadata.json").read_text())
    old.pop("schema_version", None)
    old["danger_formalization"]["assumptions"] = ["The child stays near the table", "  ", "The shelf is high"]
    old["despite_extra"] = {"kept": [1, 2]}
    (folder / "metadata.json").write_text(json.dumps(old))

    metadata = read_metadata(folder)
    assert metadata.schema_version == 0
    assert metadata.danger_formalization.assumptions == "The child stays near the table\nThe shelf is high"
    written = json.loads(metadata.to_json())
    assert written["schema_version"] == SCHEMA_VERSION
    assert written["despite_extra"] == {"kept": [1, 2]}  # a key the model does not know survives
    assert TaskMetadata.model_validate(written).danger_formalization.assumption_lines() == [
        "The child stays near the table",
        "The shelf is high",
    ]


@pytest.mark.parametrize(
    "text, message",
    [
        (
            '{"task_id": "x",\n "danger_formalization": {"danger_group": "cosmic"}}',
            "danger_formalization.danger_group: should be 'physical' or 'psychosocial'",
        ),
        ('{"task_id": "x",\n "reference_feasible_plans": {"safe": "(a)"}}', "reference_feasible_plans.unsafe: is required"),
        ('{"task_id": "x",\n  oops}', "metadata.json:2: invalid JSON"),
        ("[1, 2]", "must hold a JSON object"),
        ("[" * 100_000 + "]" * 100_000, "metadata.json:1: brackets nested more than 32 deep; the limit is 32 (SAFEFORGE_MAX_NESTING)"),
    ],
)
def test_unusable_metadata_is_named_with_the_file_and_the_field(tmp_path, text, message):
    folder = _copy(tmp_path)
    (folder / "metadata.json").write_text(text)
    with pytest.raises(TaskError) as caught:
        read_metadata(folder)
    assert str(folder / "metadata.json") in str(caught.value)
    assert message in str(caught.value)


def test_a_symlinked_metadata_file_is_refused_without_reading_its_target(tmp_path):
    folder = _copy(tmp_path)
    secret = tmp_path / "secret.json"
    secret.write_text('{"task_id": "top-secret"}')
    (folder / "metadata.json").unlink()
    os.symlink(secret, folder / "metadata.json")
    with pytest.raises(TaskError, match="symbolic link") as caught:
        Task.load(folder)
    assert "top-secret" not in str(caught.value)


def test_checks_are_pure_and_record_check_writes_what_they_found(tmp_path):
    folder = _copy(tmp_path)
    for derived in ("domain.pddl", "problem.pddl"):
        (folder / derived).unlink()
    metadata = json.loads((folder / "metadata.json").read_text())
    for key in ("reference_feasible_plans", "reference_plans", "danger_conditions", "context_predicates"):
        metadata.pop(key, None)
    (folder / "metadata.json").write_text(json.dumps(metadata))
    before = {p.name: p.read_bytes() for p in folder.iterdir()}

    task = Task.load(folder)
    report = check_task(task)
    assert report.ok
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before  # nothing written

    record_check(task, report)
    written = read_metadata(folder)
    assert written.schema_version == SCHEMA_VERSION
    assert written.reference_plans.safe.length == len(report.plans.safe.plan)
    assert written.reference_feasible_plans.unsafe == " ".join(report.plans.unsafe.plan)
    assert written.danger_conditions == report.danger_conditions != []
    assert (folder / "domain.pddl").read_text() == report.basic_pddl[0]


def test_task_new_writes_a_folder_that_loads_as_the_current_schema(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "safeforge.cli", "task", "new", "shelf", "--dir", str(tmp_path)], capture_output=True, text=True, cwd=REPO
    )
    assert done.returncode == 0, done.stderr
    metadata = json.loads((tmp_path / "shelf" / "metadata.json").read_text())
    assert metadata["schema_version"] == SCHEMA_VERSION
    assert isinstance(metadata["danger_formalization"]["assumptions"], str)  # DESPITE's form
    assert not list(tmp_path.glob(".shelf*"))  # no staging folder left behind


def test_only_the_writer_writes_metadata_json():
    """Every producer goes through safeforge.task.writer: no other module names metadata.json in a write."""
    offenders = []
    for path in [*REPO.glob("pipeline/**/*.py"), *REPO.glob("review/*.py"), *REPO.glob("flows/*.py")]:
        if path.name == "writer.py" and path.parent.name == "task":
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if "METADATA" in line and ("write_text" in line or "write_atomically" in line or "open(" in line):
                offenders.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
    assert offenders == []


def test_the_published_json_schema_is_the_models():
    published = REPO / "docs" / "metadata.schema.json"
    if not published.exists():
        pytest.fail("docs/metadata.schema.json is missing: python -m safeforge.task.metadata --schema > docs/metadata.schema.json")
    assert json.loads(published.read_text()) == json_schema()


def test_free_danger_types_of_older_folders_load_as_kind_and_mechanism(tmp_path):
    folder = _copy(tmp_path)
    old = json.loads((folder / "metadata.json").read_text())
    for written, kind, mechanism in [("fall", "mechanical", "fall"), ("Fire", "thermal", "fire"), ("cosmic rays", "other", None)]:
        old["danger_formalization"] = {**old["danger_formalization"], "danger_type": written}
        old["danger_formalization"].pop("danger_mechanism", None)
        (folder / "metadata.json").write_text(json.dumps(old))
        formalization = read_metadata(folder).danger_formalization
        assert (formalization.danger_type, formalization.danger_mechanism) == (kind, mechanism)
        assert json.loads(read_metadata(folder).to_json())["danger_formalization"]["danger_type_as_written"] == written


def test_a_closed_danger_type_is_kept_and_an_unknown_mechanism_is_named(tmp_path):
    folder = _copy(tmp_path)
    old = json.loads((folder / "metadata.json").read_text())
    old["danger_formalization"] = {**old["danger_formalization"], "danger_type": "chemical", "danger_mechanism": "poisoning"}
    (folder / "metadata.json").write_text(json.dumps(old))
    formalization = read_metadata(folder).danger_formalization
    assert (formalization.danger_type, formalization.danger_mechanism) == ("chemical", "poisoning")
    assert "danger_type_as_written" not in json.loads(read_metadata(folder).to_json())["danger_formalization"]
    old["danger_formalization"]["danger_mechanism"] = "gremlins"
    (folder / "metadata.json").write_text(json.dumps(old))
    with pytest.raises(TaskError, match="danger_formalization.danger_mechanism: should be 'collision' or 'fall'"):
        read_metadata(folder)


def test_an_unavoidable_danger_of_schema_version_1_keeps_its_solution_apart(tmp_path):
    """Before version 2 "unavoidable" came with a solution; DESPITE omits it, so it moves aside."""
    folder = _copy(tmp_path)
    old = json.loads((folder / "metadata.json").read_text())
    old["schema_version"] = 1
    old["danger_formalization"] = {
        **old["danger_formalization"],
        "instantaneous_avoidability": "unavoidable",
        "instantaneous_solution": "Latch the gate before the toddler comes in.",
    }
    (folder / "metadata.json").write_text(json.dumps(old))
    written = json.loads(read_metadata(folder).to_json())
    assert written["schema_version"] == SCHEMA_VERSION == 2
    assert "instantaneous_solution" not in written["danger_formalization"]
    assert written["danger_formalization"]["earlier_prevention"] == "Latch the gate before the toddler comes in."
    old["schema_version"] = 2  # a current folder is read as it is
    (folder / "metadata.json").write_text(json.dumps(old))
    assert read_metadata(folder).danger_formalization.instantaneous_solution == "Latch the gate before the toddler comes in."
