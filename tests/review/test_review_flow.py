"""Push, annotate as annotators do, pull, status: against a real Label Studio server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from review_helpers import ADMIN, Submission, ls_task_id, submit

from safeforge.review import project_title, pull_run, push_run, review_status

KITCHEN, BLEACH, DOG, CRATE = (
    "kitchen_mopped_floor_hot_soup",
    "bathroom_bleach_bucket",
    "party_leftovers_dog_chocolate",
    "warehouse_heavy_crate_ramp",
)


def test_push_and_pull_leave_no_error_in_the_servers_log(make_run, config, labelstudio):
    """Paging past the last page made Label Studio log "[ERROR] Invalid page." on every push and pull."""
    log = Path(labelstudio.log_path)
    before = log.stat().st_size
    store = make_run([KITCHEN, BLEACH])
    push_run(store, config)
    push_run(store, config)  # the project found by its title, its tasks listed again
    pull_run(store, config)
    written = log.read_bytes()[before:].decode(errors="replace")
    assert "Invalid page" not in written and "[ERROR]" not in written, written[-2000:]


def _metadata(store, task_id: str) -> dict:
    return json.loads((store.task_dir(task_id) / "metadata.json").read_text())


def test_push_imports_checked_tasks_with_nothing_preselected_and_pushing_again_adds_nothing(make_run, config, admin):
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


def test_a_push_lists_the_projects_tasks_once_and_once_more_after_importing(make_run, config, monkeypatch):
    from label_studio_sdk.tasks.client_ext import TasksClientExt

    listed = []
    list_tasks = TasksClientExt.list

    def counted(self, *args, **kwargs):
        listed.append(kwargs.get("project"))
        return list_tasks(self, *args, **kwargs)

    monkeypatch.setattr(TasksClientExt, "list", counted)
    store = make_run([KITCHEN, BLEACH])
    push_run(store, config, batch_size=1)  # two imports, one listing after both
    assert len(listed) == 2
    listed.clear()
    push_run(store, config)  # nothing to import
    assert len(listed) == 1


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
    push_run(store, config, adjudicators=[ADMIN])  # before any vote: decisions unchanged
    ann, bob = annotator("ann@review.test"), annotator("bob@review.test")
    votes = {KITCHEN: ("accept", "accept"), BLEACH: ("accept", "reject"), DOG: ("reject", "reject"), CRATE: ("accept", "reject")}
    for task_id, (ann_vote, bob_vote) in votes.items():
        reasons = ("plans_not_sensible",)
        submit(ann, ls_task_id(store, task_id), Submission(ann_vote, reasons=reasons if ann_vote == "reject" else ()))
        submit(bob, ls_task_id(store, task_id), Submission(bob_vote, reasons=reasons if bob_vote == "reject" else ()))
    # the admin adjudicates the crate task: accept
    submit(admin, ls_task_id(store, CRATE), Submission("accept", adjudicating=True))
    result = pull_run(store, config)
    # with an adjudicator named, split votes wait for them: BLEACH is in the adjudication queue
    assert sorted(result.accepted) == sorted([CRATE, KITCHEN]) and result.rejected == [DOG]
    assert result.queue == {BLEACH: "votes split: 1 accept, 1 reject"}
    # ann a,a,r,a  bob a,r,r,r: p_o 2/4; p_e 3/4*1/4 + 1/4*3/4 = 3/8; kappa (1/2-3/8)/(5/8) = 0.2; every task with
    # two votes counts, decided or not. Krippendorff's alpha: o_aa 2, o_ar = o_ra 2, o_rr 2; n_a = n_r = 4, n 8;
    # D_o 4, D_e 32/7; alpha = 1 - 4*7/32 = 0.125
    assert (result.agreement.tasks, result.agreement.percent) == (4, 50.0)
    assert result.agreement.cohen_kappa == pytest.approx(0.2) and result.agreement.krippendorff_alpha == pytest.approx(0.125)
    submit(admin, ls_task_id(store, BLEACH), Submission("reject", reasons=("plans_not_sensible",), adjudicating=True))
    assert pull_run(store, config).rejected == [BLEACH]
    rules = {task_id: _metadata(store, task_id)["review"]["final_rule"] for task_id in votes}
    assert rules == {KITCHEN: "unanimous", BLEACH: "adjudicated", DOG: "unanimous", CRATE: "adjudicated"}
    bleach = _metadata(store, BLEACH)["review"]
    assert bleach["agreement"] == {"annotators": 2, "percent": 0.0}
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
    assert "all" in table and "50.0%" in table and "Plans not sensible" in table and "Cohen's kappa 0.200" in table
    assert "Krippendorff's alpha 0.125" in table and "Adjudication queue" not in table
    assert "## Review" in status.to_markdown() and "| ann@review.test | 4 |" in status.to_markdown()


def test_a_release_built_from_a_real_pull_publishes_the_review_and_names_no_annotator(make_run, config, annotator, admin, tmp_path):
    import datasets

    from safeforge.publishing import publish

    store = make_run([KITCHEN, BLEACH])
    push_run(store, config, annotators_per_task=2, adjudicators=[ADMIN])
    carol, dave = annotator("carol@review.test"), annotator("dave@review.test")
    submit(carol, ls_task_id(store, KITCHEN), Submission("accept", lead_time=12.0))
    submit(dave, ls_task_id(store, KITCHEN), Submission("accept", lead_time=9.0))
    submit(carol, ls_task_id(store, BLEACH), Submission("accept", lead_time=8.0))
    submit(dave, ls_task_id(store, BLEACH), Submission("reject", reasons=("other",), lead_time=20.0))
    submit(admin, ls_task_id(store, BLEACH), Submission("accept", adjudicating=True))
    assert sorted(pull_run(store, config).accepted) == [BLEACH, KITCHEN]
    out = tmp_path / "release"
    publish([store.root], "v0.1.0", out)
    rows = {r["task_id"]: r for r in datasets.load_dataset(str(out), cache_dir=str(tmp_path / "cache"))["train"]}
    kitchen, bleach = rows[KITCHEN]["review"], rows[BLEACH]["review"]
    assert (kitchen["decision"], kitchen["annotators"], kitchen["accept_votes"], kitchen["disagreements"]) == ("accepted", 2, 2, [])
    assert bleach["final_rule"] == "adjudicated"
    assert bleach["disagreements"] == [
        {"kind": "votes", "field": "", "summary": "votes split: 1 accept, 1 reject", "resolution": "adjudicated"}
    ]
    published = json.loads(rows[BLEACH]["metadata_json"])["review"]
    assert all(a["annotator"].startswith("annotator-") for a in published["annotations"])
    [disagreement] = published["disagreements"]
    assert disagreement["resolved_by"].startswith("annotator-") and all(n.startswith("annotator-") for n in disagreement["annotators"])
    card = (out / "README.md").read_text()
    assert "## Human review" in card and "2 task(s) with two or more votes: 50.0% pairwise agreement" in card
    assert "Krippendorff's alpha" in card and "| votes split | 1 | 1 | 1 |" in card and "![plots/agreement.png]" in card
    assert (out / "plots" / "agreement.png").read_bytes().startswith(b"\x89PNG")
    everything = b"".join(p.read_bytes() for p in out.rglob("*") if p.is_file())
    assert b"review.test" not in everything
