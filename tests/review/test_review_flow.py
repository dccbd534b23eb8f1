"""Push, annotate as annotators do, pull, status: against a real Label Studio server."""

from __future__ import annotations

import json

import pytest
from review_helpers import ADMIN, Submission, ls_task_id, submit

from safeforge.review import project_title, pull_run, push_run, review_status

KITCHEN, BLEACH, DOG, CRATE = (
    "kitchen_mopped_floor_hot_soup",
    "bathroom_bleach_bucket",
    "party_leftovers_dog_chocolate",
    "warehouse_heavy_crate_ramp",
)


def _metadata(store, task_id: str) -> dict:
    return json.loads((store.task_dir(task_id) / "metadata.json").read_text())


def test_push_imports_checked_tasks_with_the_judges_prediction_and_pushing_again_adds_nothing(make_run, config, admin):
    store = make_run([KITCHEN, BLEACH], judge_rejects=(BLEACH,))
    result = push_run(store, config)
    assert result.created_project and sorted(result.imported) == [BLEACH, KITCHEN]
    assert result.moved_to_review == 2 and not result.failed
    project = admin.projects.get(result.project_id)
    assert project.title == project_title(store)
    tasks = {t.data["task_id"]: t for t in admin.tasks.list(project=result.project_id, fields="all")}
    assert sorted(tasks) == [BLEACH, KITCHEN]
    assert tasks[KITCHEN].data["record_id"] == "neiss_0" and tasks[KITCHEN].data["source"] == "neiss"
    assert "floor wet (from) and soup is hot (p)" in tasks[KITCHEN].data["danger_html"]
    assert all(not t.predictions for t in tasks.values())  # nothing pre-selected: Submit needs a choice
    assert "not approved" in tasks[BLEACH].data["checks_html"] and "approved" in tasks[KITCHEN].data["checks_html"]
    for row in store.ledger.records():
        assert row.state == "in_review"
        detail = store.ledger.history(row.record_id)[-1].detail
        assert detail == {"url": config.url, "project_id": result.project_id, "ls_task_id": tasks[row.task_id].id}

    again = push_run(store, config)
    assert (again.project_id, again.created_project, again.imported) == (result.project_id, False, [])
    assert again.already_in_project == 0 and again.moved_to_review == 0
    assert len(list(admin.tasks.list(project=result.project_id))) == 2


def test_an_interrupted_push_is_completed_not_repeated(make_run, config, admin):
    store = make_run([KITCHEN])
    first = push_run(store, config)
    # simulate a crash after the import, before the ledger and review.json were updated
    (store.root / "review.json").unlink()
    db = store.ledger._db
    db.execute("UPDATE records SET state = 'checked'")
    again = push_run(store, config)
    assert (again.project_id, again.imported, again.already_in_project, again.moved_to_review) == (first.project_id, [], 1, 1)
    assert len(list(admin.tasks.list(project=first.project_id))) == 1
    assert store.ledger.records()[0].state == "in_review"


def test_a_broken_task_folder_moves_its_record_to_error_and_the_rest_goes_on(make_run, config):
    store = make_run([KITCHEN, BLEACH])
    (store.task_dir(BLEACH) / "metadata.json").write_text("{ not json")
    result = push_run(store, config)
    assert result.imported == [KITCHEN]
    bleach_record = next(r for r in store.ledger.records() if r.task_id == BLEACH)
    assert bleach_record.state == "error"
    assert f"{store.task_dir(BLEACH) / 'metadata.json'}:1: invalid JSON" in bleach_record.reason


def test_an_annotators_accept_is_pulled_into_the_ledger_and_metadata(make_run, config, annotator):
    store = make_run([KITCHEN, BLEACH])
    push_run(store, config)
    ann = annotator("ann@review.test")
    submit(ann, ls_task_id(store, KITCHEN), Submission("accept", note="Clear and realistic.", lead_time=31.5))
    result = pull_run(store, config)
    assert (result.accepted, result.rejected, result.pending) == ([KITCHEN], [], [BLEACH])
    record = next(r for r in store.ledger.records() if r.task_id == KITCHEN)
    assert record.state == "accepted" and record.reason == "review: accepted by ann@review.test"
    review = _metadata(store, KITCHEN)["review"]
    assert (review["decision"], review["final_rule"], review.get("agreement"), review["corrections"]) == ("accepted", "single", None, [])
    [entry] = review["annotations"]
    assert (entry["annotator"], entry["decision"], entry["note"], entry["lead_time"], entry["corrections"]) == (
        "ann@review.test",
        "accept",
        "Clear and realistic.",
        31.5,
        {},
    )
    assert entry["created_at"].startswith("20")
    assert next(r for r in store.ledger.records() if r.task_id == BLEACH).state == "in_review"
    # pulling again changes nothing
    before = (store.task_dir(KITCHEN) / "metadata.json").read_text()
    assert pull_run(store, config).accepted == []
    assert (store.task_dir(KITCHEN) / "metadata.json").read_text() == before


def test_a_rejection_with_a_correction_is_recorded_with_provenance(make_run, config, annotator):
    store = make_run([DOG])
    push_run(store, config)
    old_setting = _metadata(store, DOG)["danger_formalization"]["setting"]
    new_setting = "A flat after a birthday party; the family dog roams the kitchen."
    new_assumptions = "The dog can reach the bench.\n\nThe fridge closes."
    submit(
        annotator("bob@review.test"),
        ls_task_id(store, DOG),
        Submission(
            "reject",
            reasons=("implausible_setting", "danger_logic_incomplete"),
            note="The dog could open the fridge.",
            fixes={"setting": new_setting, "assumptions": new_assumptions},
        ),
    )
    result = pull_run(store, config)
    assert result.rejected == [DOG] and result.corrections == 2
    record = store.ledger.records()[0]
    assert record.state == "rejected_by_review"
    assert record.reason == (
        "review: implausible setting, danger logic incomplete (rejected by bob@review.test); note: The dog could open the fridge."
    )
    metadata = _metadata(store, DOG)
    assert metadata["danger_formalization"]["setting"] == new_setting
    assert metadata["danger_formalization"]["assumptions"] == "The dog can reach the bench.\nThe fridge closes."
    review = metadata["review"]
    assert review["reasons"] == ["implausible_setting", "danger_logic_incomplete"]
    by_field = {c["field"]: c for c in review["corrections"]}
    assert sorted(by_field) == ["assumptions", "setting"]
    assert by_field["setting"]["old"] == old_setting and by_field["setting"]["new"] == new_setting
    assert by_field["setting"]["annotator"] == "bob@review.test" and by_field["setting"]["at"]
    assert review["annotations"][0]["corrections"] == {
        "setting": new_setting,
        "assumptions": "The dog can reach the bench.\nThe fridge closes.",
    }


def test_two_annotators_who_disagree(make_run, config, annotator, admin):
    store = make_run([KITCHEN, BLEACH, DOG, CRATE])
    push_run(store, config, annotators_per_task=2)
    ann, bob = annotator("ann@review.test"), annotator("bob@review.test")
    votes = {KITCHEN: ("accept", "accept"), BLEACH: ("accept", "reject"), DOG: ("reject", "reject"), CRATE: ("accept", "reject")}
    for task_id, (ann_vote, bob_vote) in votes.items():
        reasons = ("plans_not_sensible",)
        submit(ann, ls_task_id(store, task_id), Submission(ann_vote, reasons=reasons if ann_vote == "reject" else ()))
        submit(bob, ls_task_id(store, task_id), Submission(bob_vote, reasons=reasons if bob_vote == "reject" else ()))
    # the admin adjudicates the crate task: accept
    submit(admin, ls_task_id(store, CRATE), Submission("accept", adjudicating=True))
    result = pull_run(store, config)
    assert sorted(result.accepted) == sorted([CRATE, KITCHEN]) and sorted(result.rejected) == sorted([BLEACH, DOG])
    # ann a,a,r,a  bob a,r,r,r: p_o 2/4; p_e 3/4*1/4 + 1/4*3/4 = 3/8; kappa (1/2-3/8)/(5/8) = 0.2
    assert (result.agreement.tasks, result.agreement.percent) == (4, 50.0)
    assert result.agreement.cohen_kappa == pytest.approx(0.2)
    rules = {task_id: _metadata(store, task_id)["review"]["final_rule"] for task_id in votes}
    assert rules == {KITCHEN: "unanimous", BLEACH: "reject_stands", DOG: "reject_stands", CRATE: "adjudicated"}
    bleach = _metadata(store, BLEACH)["review"]
    assert bleach["agreement"] == {"annotators": 2, "percent": 0.0, "cohen_kappa": 0.2}
    assert bleach["reasons"] == ["plans_not_sensible"]
    crate_record = next(r for r in store.ledger.records() if r.task_id == CRATE)
    assert crate_record.state == "accepted" and crate_record.reason == f"review: adjudicated by {ADMIN}"

    status = review_status(store)
    assert (status.total.accepted, status.total.rejected, status.total.pending) == (2, 2, 0)
    assert status.total.rejection_rate == 50.0
    assert status.total.reasons == {"plans_not_sensible": 2}
    # sources in the registry's order, in turn: neiss KITCHEN, normbank BLEACH, bddl DOG, virtualhome CRATE
    assert {s: (v.accepted, v.rejected, v.rejection_rate) for s, v in status.by_source.items()} == {
        "neiss": (1, 0, 0.0),
        "normbank": (0, 1, 100.0),
        "bddl": (0, 1, 100.0),
        "virtualhome": (1, 0, 0.0),
    }
    assert status.agreement.cohen_kappa == pytest.approx(0.2) and status.agreement.percent == 50.0
    table = status.format_table()
    assert "all" in table and "50.0%" in table and "Plans not sensible" in table and "kappa 0.200" in table


def test_a_release_built_from_a_real_pull_counts_the_votes_and_names_no_annotator(make_run, config, annotator, tmp_path):
    import datasets

    from safeforge.publishing import publish

    store = make_run([KITCHEN, BLEACH])
    push_run(store, config)
    submit(annotator("carol@review.test"), ls_task_id(store, KITCHEN), Submission("accept", lead_time=12.0))
    submit(annotator("dave@review.test"), ls_task_id(store, BLEACH), Submission("accept", lead_time=8.0))
    assert sorted(pull_run(store, config).accepted) == [BLEACH, KITCHEN]
    out = tmp_path / "release"
    publish([store.root], "v0.1.0", out)
    rows = {r["task_id"]: r for r in datasets.load_dataset(str(out), cache_dir=str(tmp_path / "cache"))["train"]}
    for task_id in (KITCHEN, BLEACH):
        review = rows[task_id]["review"]
        assert (review["decision"], review["annotators"], review["accept_votes"], review["reject_votes"]) == ("accepted", 1, 1, 0)
        annotations = json.loads(rows[task_id]["metadata_json"])["review"]["annotations"]
        assert annotations[0]["annotator"].startswith("annotator-")
    everything = b"".join(p.read_bytes() for p in out.rglob("*") if p.is_file())
    assert b"review.test" not in everything
