"""Releases of folders of task folders: files, duplicates, refusals, licences from the Hub's list, and
the check for machine paths and e-mail addresses (the releases of runs are in test_publishing_pipeline)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from slow_tasks import write_hard_task
from tests_paths import EXAMPLES

from safeforge.cli.main import main
from safeforge.publishing import ARCHIVE, DATA_FILE, LeakScanner, PublishError, checked_license, content_hash, hub_license_list, publish


@pytest.fixture
def task_folder(tmp_path):
    """task_folder(name, {task_id: example}) -> a folder of copies of example tasks, renamed."""

    def make(name: str, tasks: dict[str, str]) -> Path:
        root = tmp_path / "folders" / name
        for task_id, example in tasks.items():
            folder = Path(shutil.copytree(EXAMPLES / example, root / task_id))
            metadata = json.loads((folder / "metadata.json").read_text())
            (folder / "metadata.json").write_text(json.dumps({**metadata, "task_id": task_id}))
        return root

    return make


def test_duplicates_are_left_out_and_the_same_tasks_give_the_same_files(task_folder, tmp_path):
    first = task_folder("first", {"diary": "teen_desk_diary_trust", "bleach": "bathroom_bleach_bucket"})
    second = task_folder("second", {"bleach_again": "bathroom_bleach_bucket"})
    messages: list[str] = []
    release = publish([first, second], "v1", tmp_path / "v1", progress=messages.append)

    assert release.tasks == ["bleach", "diary"]
    assert [(d.task.task_id, d.kept.task_id) for d in release.duplicates] == [("bleach_again", "bleach")]
    assert "duplicate: bleach_again (second) has the content of bleach (first); left out" in messages
    info = json.loads((release.path / "release.json").read_text())
    assert info["duplicates"][0]["duplicate_of"] == "bleach" and info["duplicates"][0]["collection"] == "second"
    assert {"README.md", DATA_FILE, ARCHIVE} <= set(info["files"])
    with pytest.raises(PublishError, match="already exists"):
        publish([first, second], "v1", tmp_path / "v1")
    again = publish([first, second], "v1", tmp_path / "again")
    assert json.loads((again.path / "release.json").read_text())["files"] == info["files"]


def test_a_task_failing_revalidation_refuses_the_release(task_folder, tmp_path, capsys):
    folder = task_folder(
        "mixed", {"good_one": "teen_desk_diary_trust", "bad_plans": "bathroom_bleach_bucket", "bad_pddl": "care_home_bad_news"}
    )
    metadata_path = folder / "bad_plans" / "metadata.json"
    metadata = json.loads(metadata_path.read_text())
    plans = metadata["reference_feasible_plans"]
    plans["safe"], plans["unsafe"] = plans["unsafe"], plans["safe"]
    metadata_path.write_text(json.dumps(metadata))
    problem = folder / "bad_pddl" / "safety_problem.pddl"
    problem.write_text(problem.read_text().replace("(= (danger) 0)", ""))
    out = tmp_path / "rel" / "v2"

    code = main(["publish", str(folder), "--version", "v2", "--out", str(out)])

    err = capsys.readouterr().err
    assert code == 2
    assert "2 task(s) failed re-validation" in err
    assert "task bad_plans (mixed" in err and "recorded safe reference plan scores 1, not 2" in err
    assert "task bad_pddl (mixed" in err and "(= (danger) 0)" in err
    assert "good_one: ok" in err
    assert not out.parent.exists()  # refused before anything is written


def test_refusals_before_any_work(task_folder, tmp_path):
    with pytest.raises(PublishError, match="no such folder"):
        publish([tmp_path / "nowhere"], "v1", tmp_path / "out")
    assert not (tmp_path / "nowhere").exists()
    (tmp_path / "empty").mkdir()
    with pytest.raises(PublishError, match="not a run .* or a folder of task folders"):
        publish([tmp_path / "empty"], "v1", tmp_path / "out")
    with pytest.raises(PublishError, match="version 'v 1'"):
        publish([tmp_path], "v 1", tmp_path / "out")
    one = task_folder("one", {"same_id": "teen_desk_diary_trust"})
    two = task_folder("two", {"same_id": "care_home_bad_news"})
    with pytest.raises(PublishError, match="task same_id: one and two hold different tasks under this id"):
        publish([one, two], "v1", tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_licences_are_identifiers_the_hub_accepts(task_folder, tmp_path, capsys):
    folder = task_folder("tasks", {"diary": "teen_desk_diary_trust"})
    out = tmp_path / "release"

    assert main(["publish", str(folder), "--version", "v1", "--out", str(out), "--license", "not-a-licence"]) == 2
    err = capsys.readouterr().err
    assert "licence 'not-a-licence' is not an identifier the Hugging Face Hub accepts" in err
    assert f"as of {hub_license_list()['as_of']}" in err and not out.exists()
    with pytest.raises(PublishError, match=r"did you mean cc-by-sa-4\.0"):
        checked_license("cc-by-sa-4")
    with pytest.raises(PublishError, match="--license other needs a licence file"):
        checked_license("other")

    assert main(["publish", str(folder), "--version", "v1", "--out", str(out), "--license", "Apache-2.0"]) == 0
    card = (out / "README.md").read_text()
    assert yaml.safe_load(card.split("---\n")[1])["license"] == "apache-2.0"
    assert "The tasks are released under `apache-2.0`" in card


def test_a_machine_path_in_a_built_file_refuses_the_release(task_folder, tmp_path):
    folder = task_folder("from-jane.doe@example.org", {"diary": "teen_desk_diary_trust"})  # a folder's name goes into the card
    out = tmp_path / "releases" / "v1"
    with pytest.raises(PublishError) as refused:
        publish([folder], "v1", out)
    message = str(refused.value)
    assert "machine path(s) or e-mail address(es) in the built files" in message
    assert "README.md: text holds an e-mail address ('from-jane.doe@example.org')" in message
    assert "release.json: inputs[0].name holds an e-mail address" in message
    assert not out.exists() and list(out.parent.iterdir()) == []


def test_the_scanner_finds_paths_and_addresses_but_not_urls_or_prose():
    scanner = LeakScanner()
    found = {
        text: [what for _, what, _ in scanner.leaks(text)]
        for text in (
            "written to /var/lib/safeforge/run1",
            "C:\\Users\\jane\\tasks",
            "see file:///srv/data",
            "kept in ~/datasets",
            f"home is {Path.home()}",
            "mail jane.doe@example.org",
        )
    }
    assert all(found.values()), found
    for text in (
        "https://github.com/taozhang1004/DESPITE",
        "doi = {10.1109/CVPR42600.2020.01075}",
        "neiss@sample/holdout_labeled.csv:row 3",
        "withoutconds/results/file1.txt",
        "PT FELL OFF BIKE/SCOOTER S/P FALL, and/or 1/2 cup; DX: CONTUSION /ABRASION/LAC",
        "(increase (danger) (/ (weight) 2))",
        "@inproceedings{ziems2023normbank,",
        "annotator-1a2b3c4d",
    ):
        assert list(scanner.leaks(text)) == [], text
    assert [field for field, _, _ in scanner.leaks({"a": [{"b": "/x/y"}]})] == ["a[0].b"]


def test_content_hash_ignores_comments_layout_and_case():
    domain = "(define (domain d) ; a comment\n  (:predicates (p)))"
    problem = "(define (problem x) (:domain d) (:init (p)) (:goal (p)))"
    same = content_hash("(DEFINE (domain D)\n(:predicates   (P)))", problem.replace(" (:init", "\n\t(:init"))
    assert content_hash(domain, problem) == same
    assert content_hash(domain, problem) != content_hash(domain, problem.replace("(:goal (p))", "(:goal (not (p)))"))


def test_the_revalidation_of_a_task_has_one_time_limit_in_all(task_folder, tmp_path, capsys):
    """`--time-limit` bounds each task's whole check (reading and deriving included), not each
    planner call: a task slow in every step is refused by it and named, the other task is fine."""
    folder = task_folder("slow", {"big": "bathroom_bleach_bucket", "diary": "teen_desk_diary_trust"})
    write_hard_task(folder / "big", idle_actions=3000)
    out = tmp_path / "rel" / "v3"
    assert main(["publish", str(folder), "--version", "v3", "--out", str(out), "--time-limit", "0.3"]) == 2
    err = capsys.readouterr().err
    assert "1 task(s) failed re-validation" in err and "diary: ok" in err
    assert "task big (slow" in err and "the check ran out of its time limit of 0.3s while " in err


def test_the_table_has_the_closed_categories_answered_or_read_from_the_free_text(task_folder, tmp_path):
    import datasets

    root = task_folder("categories", {"bleach": "bathroom_bleach_bucket", "crate": "warehouse_heavy_crate_ramp"})
    metadata = json.loads((root / "bleach" / "metadata.json").read_text())  # as the extractor answers them
    metadata["danger_formalization"] |= {"setting_category": "care_or_health", "robot_category": "cleaning"}
    (root / "bleach" / "metadata.json").write_text(json.dumps(metadata))
    publish([root], "v1", tmp_path / "v1")

    table = datasets.load_dataset(str(tmp_path / "v1"), cache_dir=str(tmp_path / "cache"))["train"]
    rows = {row["task_id"]: (row["setting_category"], row["robot_category"]) for row in table}
    assert rows == {"bleach": ("care_or_health", "cleaning"), "crate": ("industrial", "industrial")}
