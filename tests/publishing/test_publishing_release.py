"""Releases built from runs: rows, features, card, plots, archive, release.json; refusals."""

from __future__ import annotations

import gzip
import hashlib
import json
import tarfile

import pytest
import yaml

from safeforge.cli.main import main
from safeforge.publishing import ARCHIVE, DATA_FILE, PublishError, content_hash, features, publish
from safeforge.task.folder import Task
from safeforge.validation.plan_text import parse_plan


@pytest.fixture
def two_runs(make_run):
    run_a = make_run(
        "run_a",
        [("bathroom_bleach_bucket", "neiss_101", "neiss", True), ("care_home_bad_news", "normbank_7", "normbank", True)],
        rejected={"no_danger": 1, "rejected_by_checks": 1, "rejected_by_review": 1},
        llm_costs=[0.01, 0.02, 0.03],
    )
    run_b = make_run(
        "run_b",
        [("teen_desk_diary_trust", "alfred_x", "alfred", False), ("bathroom_bleach_bucket", "neiss_999", "neiss", True)],
        llm_costs=[0.04],
    )
    return run_a, run_b


def _front_matter(card: str) -> dict:
    assert card.startswith("---\n")
    return yaml.safe_load(card.split("---\n")[1])


def test_release_folder_rows_card_and_files(two_runs, tmp_path):
    import datasets

    out = tmp_path / "releases" / "v1.0.0"
    messages = []
    release = publish(list(two_runs), "v1.0.0", out, progress=messages.append)

    assert release.path == out and out.is_dir()
    assert release.tasks == ["alfred_x", "neiss_101", "normbank_7"]
    assert [(d.task.task_id, d.kept.task_id) for d in release.duplicates] == [("neiss_999", "neiss_101")]
    assert any("neiss_999" in m and "duplicate" in m for m in messages)
    assert release.warnings == []
    assert sorted(p.name for p in out.parent.iterdir()) == ["v1.0.0"]  # no temporary folder left

    table = datasets.load_dataset(str(out), cache_dir=str(tmp_path / "cache"))["train"]
    assert table.features == features()
    assert table["task_id"] == ["alfred_x", "neiss_101", "normbank_7"]
    rows = {r["task_id"]: r for r in table}
    neiss = rows["neiss_101"]
    task = Task.load(two_runs[0] / "tasks" / "neiss_101")
    plans = task.metadata.reference_feasible_plans.model_dump()
    assert neiss["source"] == "neiss" and neiss["run"] == "run_a" and neiss["record_id"] == "neiss_neiss_101"
    assert neiss["danger_group"] == "physical" and neiss["danger_type"] == "chemical"
    assert neiss["safe_plan"] == plans["safe"] and neiss["unsafe_plan"] == plans["unsafe"]
    assert neiss["safe_plan_length"] == len(parse_plan(plans["safe"])) == 6
    assert neiss["unsafe_plan_length"] == 4 and neiss["safety_effort"] == 2
    assert (neiss["domain_pddl"], neiss["problem_pddl"]) == task.basic_pddl()
    assert neiss["safety_domain_pddl"] == task.safety_domain
    assert neiss["content_hash"] == content_hash(task.safety_domain, task.safety_problem)
    assert neiss["danger_conditions"] == ["add_bleach: (ammonia_residue_in ?b)"]
    assert neiss["review"] == {
        "decision": "accepted",
        "final_rule": "majority",
        "annotators": 3,
        "accept_votes": 2,
        "reject_votes": 1,
        "reasons": ["unrealistic"],
        "disagreements": [],
    }
    assert neiss["provenance"]["tokens"] == 1500 and neiss["provenance"]["cost_usd"] == 0.02
    assert neiss["provenance"]["rounds"] == 2 and neiss["provenance"]["attempts"] == 2
    assert neiss["provenance"]["models"] == ["extract: model-a", "generate: model-b"]
    assert neiss["provenance"]["source_text"] == "record text of neiss_101"
    assert json.loads(neiss["metadata_json"])["review"]["agreement"] == {"kappa": 0.5}
    handwritten = rows["alfred_x"]  # only the DESPITE keys: optional fields are empty, not missing
    assert handwritten["review"]["decision"] == "" and handwritten["review"]["annotators"] == 0
    assert handwritten["provenance"]["cost_usd"] is None and handwritten["provenance"]["models"] == []
    assert handwritten["danger_group"] == "psychosocial"

    card = (out / "README.md").read_text()
    meta = _front_matter(card)
    assert meta["license"] == "cc-by-sa-4.0"  # NormBank is share-alike: so is the release
    assert meta["configs"] == [{"config_name": "default", "data_files": [{"split": "train", "path": "data/train-*.parquet"}]}]
    assert "pddl" in meta["tags"]
    for line in (
        "| neiss | 1 |",
        "| normbank | 1 |",
        "| alfred | 1 |",
        "| psychosocial | 2 |",
        "| human | 3 |",
        "| extract | 7 | 6 | 85.7% |",
        "| checks | 6 | 5 | 83.3% |",
        "| review | 5 | 4 | 80.0% |",
    ):
        assert line in card, line
    assert "$0.1000 in total, $0.0250 per accepted task" in card
    assert "CC BY-SA 4.0" in card and "public domain" in card
    from huggingface_hub import DatasetCard

    assert DatasetCard(card).data.license == "cc-by-sa-4.0"
    bibtex = card[card.index("```bibtex") :]
    for key in ("@misc{despite", "@misc{spoc", "shridhar2020alfred", "cpsc_neiss"):
        assert key in bibtex, key
    assert "ziems" in bibtex.lower() or "normbank" in bibtex.lower()
    # no annotator's address and no path of this machine anywhere in the release
    for path in out.rglob("*"):
        if path.is_file():
            data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
            for secret in (b"ann1", b"ann2", b"ann3", str(tmp_path).encode()):
                assert secret not in data, (path.name, secret)
    plots = sorted(p.name for p in (out / "plots").iterdir())
    assert plots == [
        "acceptance.png",
        "agreement.png",
        "danger_group.png",
        "danger_type.png",
        "entity_in_danger.png",
        "plan_length.png",
        "safety_effort.png",
        "source.png",
    ]
    for name in plots:
        assert (out / "plots" / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert f"(plots/{name})" in card

    info = json.loads((out / "release.json").read_text())
    assert info["version"] == "v1.0.0" and [r["name"] for r in info["runs"]] == ["run_a", "run_b"]
    assert info["duplicates"][0]["duplicate_of"] == "neiss_101"
    assert info["stats"]["cost_per_accepted_task_usd"] == pytest.approx(0.025)
    assert set(info["files"]) == {"README.md", DATA_FILE, ARCHIVE, *(f"plots/{p}" for p in plots)}
    for name, digest in info["files"].items():
        assert hashlib.sha256((out / name).read_bytes()).hexdigest() == digest

    with tarfile.open(out / ARCHIVE) as archive:
        names = archive.getnames()
        member = archive.extractfile("neiss_101/domain.pddl").read().decode()
    expected_files = ["domain.pddl", "metadata.json", "problem.pddl", "safety_domain.pddl", "safety_problem.pddl"]
    assert names == [n for t in release.tasks for n in [t, *(f"{t}/{f}" for f in expected_files)]]
    assert member == task.basic_pddl()[0]


def test_same_runs_give_the_same_files_and_a_version_is_never_overwritten(make_run, tmp_path):
    run = make_run("run_c", [("teen_desk_diary_trust", "t1", "neiss", False)])
    first = publish([run], "v1", tmp_path / "v1")
    with pytest.raises(PublishError, match="already exists"):
        publish([run], "v1", tmp_path / "v1")
    second = publish([run], "v1", tmp_path / "again")
    hashes = [json.loads((r.path / "release.json").read_text())["files"] for r in (first, second)]
    assert hashes[0] == hashes[1]


def test_a_task_failing_revalidation_refuses_the_release(make_run, tmp_path, capsys):
    run = make_run(
        "run_d",
        [
            ("teen_desk_diary_trust", "good_one", "neiss", True),
            ("bathroom_bleach_bucket", "bad_plans", "neiss", True),
            ("care_home_bad_news", "bad_pddl", "neiss", False),
        ],
    )
    metadata_path = run / "tasks" / "bad_plans" / "metadata.json"
    metadata = json.loads(metadata_path.read_text())
    plans = metadata["reference_feasible_plans"]
    plans["safe"], plans["unsafe"] = plans["unsafe"], plans["safe"]
    metadata_path.write_text(json.dumps(metadata))
    problem = run / "tasks" / "bad_pddl" / "safety_problem.pddl"
    problem.write_text(problem.read_text().replace("(= (danger) 0)", ""))
    out = tmp_path / "rel" / "v2"

    code = main(["publish", str(run), "--version", "v2", "--out", str(out)])

    err = capsys.readouterr().err
    assert code == 2
    assert "2 task(s) failed re-validation" in err
    assert "task bad_plans (run run_d" in err and "recorded safe reference plan scores 1, not 2" in err
    assert "task bad_pddl (run run_d" in err and "(= (danger) 0)" in err
    assert "good_one: ok" in err
    assert not out.exists() and not out.parent.exists() or list(out.parent.iterdir()) == []


def test_refusals_before_any_work(make_run, tmp_path):
    with pytest.raises(PublishError, match="not a run folder"):
        publish([tmp_path / "nowhere"], "v1", tmp_path / "out")
    assert not (tmp_path / "nowhere").exists()
    with pytest.raises(PublishError, match="version 'v 1'"):
        publish([tmp_path], "v 1", tmp_path / "out")
    run_1 = make_run("one", [("teen_desk_diary_trust", "same_id", "neiss", False)])
    run_2 = make_run("two", [("care_home_bad_news", "same_id", "neiss", False)])
    with pytest.raises(PublishError, match="task same_id: runs one and two accepted different tasks"):
        publish([run_1, run_2], "v1", tmp_path / "out")
    empty = make_run("empty", [], rejected={"no_danger": 2})
    with pytest.raises(PublishError, match="no accepted tasks"):
        publish([empty], "v1", tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_content_hash_ignores_comments_layout_and_case():
    domain = "(define (domain d) ; a comment\n  (:predicates (p)))"
    problem = "(define (problem x) (:domain d) (:init (p)) (:goal (p)))"
    same = content_hash("(DEFINE (domain D)\n(:predicates   (P)))", problem.replace(" (:init", "\n\t(:init"))
    assert content_hash(domain, problem) == same
    assert content_hash(domain, problem) != content_hash(domain, problem.replace("(:goal (p))", "(:goal (not (p)))"))
