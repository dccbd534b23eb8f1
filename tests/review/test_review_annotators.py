"""Several annotators on the real Label Studio server, each with their own account: decisions wait
for the votes a task needs and follow later votes; named adjudicators alone decide; every
disagreement is kept until resolved; the overlap is validated and a larger one re-opens decided
tasks; votes on duplicate copies count and are merged."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from review_helpers import Submission, ls_task_id, submit, token_of

from safeforge.review import ReviewError, pull_run, push_run, review_report, review_status
from safeforge.review._task_data import LABELING_CONFIG

KITCHEN, BLEACH, DOG, CRATE = (
    "kitchen_mopped_floor_hot_soup",
    "bathroom_bleach_bucket",
    "party_leftovers_dog_chocolate",
    "warehouse_heavy_crate_ramp",
)
LEAD = "lead@review.test"


def _state(store, task_id: str) -> str:
    return next(r for r in store.ledger.records() if r.task_id == task_id).state


def _review(store, task_id: str) -> dict:
    return json.loads((store.task_dir(task_id) / "metadata.json").read_text())["review"]


def test_a_decision_waits_for_the_second_annotator_and_follows_a_later_reject(make_run, config, annotator):
    store = make_run([KITCHEN])
    push_run(store, config, annotators_per_task=2)
    task = ls_task_id(store, KITCHEN)
    submit(annotator("alice@review.test"), task, Submission("accept", lead_time=20.0))
    first = pull_run(store, config)
    assert (first.accepted, first.pending, first.progress) == ([], [KITCHEN], {KITCHEN: "1 of 2"})
    assert _state(store, KITCHEN) == "in_review"
    assert (_review(store, KITCHEN)["waiting_for"], _review(store, KITCHEN)["votes"]) == ("votes", "1 of 2")
    status = review_status(store)
    assert status.waiting == {KITCHEN: "1 of 2"} and f"{KITCHEN}: 1 of 2" in status.format_table()

    submit(annotator("bob@review.test"), task, Submission("reject", reasons=("implausible_setting",), lead_time=35.0))
    second = pull_run(store, config)
    assert second.rejected == [KITCHEN] and _state(store, KITCHEN) == "rejected_by_review"
    assert sorted((a["annotator"], a["decision"]) for a in _review(store, KITCHEN)["annotations"]) == [
        ("alice@review.test", "accept"),
        ("bob@review.test", "reject"),
    ]
    status = review_status(store)
    assert status.waiting == {}
    bob = next(a for a in status.to_dict()["agreement"]["annotators"] if a["annotator"] == "bob@review.test")
    assert (bob["votes"], bob["agreed_with_final"], bob["median_lead_time_s"]) == (1, 1, 35.0)
    assert status.disagreements == {KITCHEN: ["votes split: 1 accept, 1 reject (alice@review.test, bob@review.test)"]}


def test_a_recorded_vote_edited_by_another_user_is_kept_and_waits_for_an_adjudicator(make_run, config, annotator, admin):
    store = make_run([KITCHEN])
    push_run(store, config)
    carol = annotator("carol@review.test")
    annotation = submit(carol, ls_task_id(store, KITCHEN), Submission("accept"))
    assert pull_run(store, config).accepted == [KITCHEN]
    assert pull_run(store, config).changed == [] and _state(store, KITCHEN) == "accepted"

    # the admin opens carol's annotation and changes accept to reject
    result = admin.annotations.get(annotation).result
    for item in result:
        if item["from_name"] == "decision":
            item["value"] = {"choices": ["reject"]}
    admin.annotations.update(annotation, result=result)
    changed = pull_run(store, config)
    moved = f"an accept vote (annotation {annotation}) now counts as another user's"
    assert changed.reopened == {KITCHEN: f"waiting for an adjudicator: {moved}"} and _state(store, KITCHEN) == "in_review"
    edited = f"annotation {annotation} was changed by another user; it counts as the editor's vote (carol@review.test, admin@review.test)"
    shown = [edited, f"{moved} (carol@review.test, admin@review.test)"]
    assert changed.disagreements == {KITCHEN: shown}
    # kept: in the metadata (typed), the ledger, every later pull and status, until resolved
    entries = _review(store, KITCHEN)["disagreements"]
    assert [(e["kind"], e["annotators"], "resolved_at" in e) for e in entries] == [
        ("edited_vote", ["carol@review.test", "admin@review.test"], False),
        ("vanished_vote", ["carol@review.test", "admin@review.test"], False),
    ]
    [vanished] = _review(store, KITCHEN)["vanished_votes"]
    assert (vanished["what"], vanished["now_annotator"], vanished["decision"]) == ("author_changed", "admin@review.test", "accept")
    assert pull_run(store, config).disagreements == {KITCHEN: shown}
    assert review_status(store).disagreements == {KITCHEN: shown}
    assert "Unresolved disagreements" in review_status(store).format_table()
    assert list(store.ledger.disagreements(open_only=True)) == [store.ledger.records()[0].record_id]

    carol.annotations.update(annotation, result=result)  # carol saves it again: the edit ends, the record stays
    resolved = pull_run(store, config)
    assert resolved.disagreements == {KITCHEN: shown[1:]} and resolved.queue == {KITCHEN: moved}
    assert resolved.resolved == [f"{KITCHEN}: {edited.split(' (')[0]}: saved again by its author, or removed"]
    assert len(_review(store, KITCHEN)["vanished_votes"]) == 1


def test_only_a_named_adjudicator_who_did_not_vote_decides(make_run, config, annotator, admin):
    """The issue's case: decided 2 accept / 1 reject -> rejected; a voter adjudicates accept."""
    store = make_run([KITCHEN])
    push_run(store, config, annotators_per_task=3)
    task = ls_task_id(store, KITCHEN)
    alice, bob, cy = annotator("alice@review.test"), annotator("bob@review.test"), annotator("cy@review.test")
    submit(alice, task, Submission("accept"))
    submit(bob, task, Submission("accept"))
    submit(cy, task, Submission("reject", reasons=("other",), note="too easy"))
    assert pull_run(store, config).rejected == [KITCHEN]  # no adjudicator named: a reject stands

    submit(alice, task, Submission("accept", adjudicating=True))  # a voter, not named: ignored, flagged
    ignored = pull_run(store, config)
    assert ignored.changed == [] and _state(store, KITCHEN) == "rejected_by_review"
    assert any("adjudication in annotation" in text and "no adjudicator is named" in text for text in ignored.disagreements[KITCHEN])

    named = push_run(store, config, adjudicators=[LEAD, "bob@review.test"])
    assert named.adjudicators == ["bob@review.test", LEAD]
    assert any(f"{LEAD} has no account on this Label Studio server yet" in w for w in named.warnings)
    # split votes now wait for an adjudicator: the decision is re-opened, and the push says why
    assert named.decisions is not None and named.decisions.reopened == {
        KITCHEN: "waiting for an adjudicator: votes split: 2 accept, 1 reject"
    }
    assert _state(store, KITCHEN) == "in_review" and "re-opened" in named.summary()
    status = review_status(store)
    assert status.queue == {KITCHEN: "votes split: 2 accept, 1 reject"} and "Adjudication queue" in status.format_table()
    queue_view = next(v for v in admin.views.list(project=named.project_id) if (v.data or {}).get("title") == "Adjudication queue")
    assert [t.id for t in admin.tasks.list(project=named.project_id, view=queue_view.id)] == [task]

    submit(bob, task, Submission("accept", adjudicating=True))  # named, but voted on this task: ignored
    assert pull_run(store, config).queue == {KITCHEN: "votes split: 2 accept, 1 reject"}
    lead = annotator(LEAD)
    submit(lead, task, Submission("accept", adjudicating=True, note="the reject was about difficulty"))
    decided = pull_run(store, config)
    assert decided.accepted == [KITCHEN] and decided.queue == {} and decided.disagreements == {}
    review = _review(store, KITCHEN)
    assert (review["decision"], review["final_rule"], review["explanation"]) == ("accepted", "adjudicated", f"adjudicated by {LEAD}")
    ignored_entries = {e["id"]: e.get("ignored_adjudication") for e in review["annotations"] if e["adjudicating"]}
    assert sorted(ignored_entries.values(), key=str) == [None, "its author is not a named adjudicator", "its author voted on this task"]
    assert {(d["kind"], d["resolution"]) for d in review["disagreements"]} == {
        ("votes", "adjudicated"),
        ("ignored_adjudication", "adjudicated"),
    }
    assert all(d["resolved_by"] == LEAD for d in review["disagreements"])
    assert review_status(store).queue == {} and list(admin.tasks.list(project=named.project_id, view=queue_view.id)) == []


def test_a_vote_deleted_by_another_annotator_is_recorded_and_sends_the_task_to_adjudication(make_run, config, annotator):
    """The issue's case: alice deletes bob's reject with her own token; a third accept must not decide."""
    store = make_run([KITCHEN])
    push_run(store, config, annotators_per_task=2, adjudicators=[LEAD])
    task = ls_task_id(store, KITCHEN)
    alice, bob = annotator("alice@review.test"), annotator("bob@review.test")
    submit(alice, task, Submission("accept"))
    rejected = submit(bob, task, Submission("reject", reasons=("other",)))
    assert pull_run(store, config).queue == {KITCHEN: "votes split: 1 accept, 1 reject"}

    alice.annotations.delete(rejected)  # Label Studio community lets any member do this
    submit(annotator("dan@review.test"), task, Submission("accept"))
    after = pull_run(store, config)
    reason = f"a reject vote (annotation {rejected}) was deleted from Label Studio"
    assert (after.accepted, after.queue) == ([], {KITCHEN: reason}) and _state(store, KITCHEN) == "in_review"
    [vanished] = _review(store, KITCHEN)["vanished_votes"]
    assert (vanished["annotation_id"], vanished["annotator"], vanished["decision"], vanished["reasons"], vanished["what"]) == (
        rejected,
        "bob@review.test",
        "reject",
        ["other"],
        "deleted",
    )
    assert vanished["voted_at"] and vanished["noticed_at"]
    assert pull_run(store, config).queue == {KITCHEN: reason}  # kept: the record is append-only
    status = review_status(store)
    assert status.vanished_votes == 1 and status.to_dict()["vanished_votes"] == 1 and "Vanished votes: 1" in status.format_table()
    assert status.queue == {KITCHEN: reason}

    submit(annotator(LEAD), task, Submission("accept", adjudicating=True))
    decided = pull_run(store, config)
    assert decided.accepted == [KITCHEN] and _review(store, KITCHEN)["final_rule"] == "adjudicated"
    assert len(_review(store, KITCHEN)["vanished_votes"]) == 1
    kinds = review_report([store]).disagreements
    assert (kinds["vanished_vote"]["found"], kinds["vanished_vote"]["adjudicated"]) == (1, 1)
    assert "recorded vote deleted or changed author | 1 | 1 | 1" in review_report([store]).to_markdown()


def test_a_decided_task_whose_vote_vanishes_goes_back_to_adjudication(make_run, config, annotator, admin):
    store = make_run([KITCHEN])
    push_run(store, config)
    vote = submit(annotator("carol@review.test"), ls_task_id(store, KITCHEN), Submission("reject", reasons=("other",)))
    assert pull_run(store, config).rejected == [KITCHEN]
    admin.annotations.delete(vote)
    reopened = pull_run(store, config)
    why = f"waiting for an adjudicator: a reject vote (annotation {vote}) was deleted from Label Studio"
    assert reopened.reopened == {KITCHEN: why} and _state(store, KITCHEN) == "in_review"
    history = store.ledger.history(store.ledger.records()[0].record_id)
    assert history[-1].reason == f"review re-opened: {why}"


def test_status_and_the_card_show_each_annotators_done_pending_and_locked_work(make_run, config, annotator, labelstudio):
    store = make_run([KITCHEN, BLEACH])
    project_id = push_run(store, config, annotators_per_task=2, adjudicators=[LEAD]).project_id
    alice, bob = annotator("alice@review.test"), annotator("bob@review.test")
    submit(alice, ls_task_id(store, KITCHEN), Submission("accept"))
    submit(alice, ls_task_id(store, BLEACH), Submission("accept"))
    submit(bob, ls_task_id(store, KITCHEN), Submission("reject", reasons=("other",)))
    pull_run(store, config)
    opened = httpx.get(  # bob opens the next task of the label stream: Label Studio locks it for him
        f"{labelstudio.url}/api/projects/{project_id}/next/",
        headers={"Authorization": f"Token {token_of(labelstudio.url, 'bob@review.test')}"},
    )
    assert opened.json()["id"] == ls_task_id(store, BLEACH)

    status = review_status(store, data_dir=Path(labelstudio.data_dir))
    rows = {r.annotator: (r.done, r.pending, r.locked, r.agreed_with_final, r.adjudicator) for r in status.annotators}
    assert rows == {
        "alice@review.test": (2, (), (), 0, False),
        "bob@review.test": (1, (BLEACH,), (BLEACH,), 0, False),
        LEAD: (0, (KITCHEN,), (), 0, True),  # the split waits for the adjudicator
    }
    assert f"bob@review.test: done 1, pending 1 ({BLEACH}), locked 1 ({BLEACH}), agreed n/a" in status.format_table()
    bob = next(r for r in status.to_dict()["annotators"] if r["annotator"] == "bob@review.test")
    assert (bob["pending"], bob["locked"]) == ([BLEACH], [BLEACH])
    assert "| bob@review.test | annotator | 1 | 1 | n/a |" in status.to_markdown()
    unknown = review_status(store)  # no data dir: the locks are not known
    assert {r.locked for r in unknown.annotators} == {None} and "locked unknown" in unknown.format_table()

    card = review_report([store]).to_markdown(lambda name: "annotator-" + name[:3])
    assert "| annotator-lea | adjudicator | 0 | 1 | n/a |" in card and "| annotator-bob | annotator | 1 | 1 | n/a |" in card


def test_conflicting_corrections_wait_for_the_adjudicator_who_can_keep_the_original(make_run, config, annotator):
    store = make_run([KITCHEN])
    push_run(store, config, annotators_per_task=2, adjudicators=[LEAD])
    task = ls_task_id(store, KITCHEN)
    original = json.loads((store.task_dir(KITCHEN) / "metadata.json").read_text())["danger_formalization"]["setting"]
    submit(annotator("erin@review.test"), task, Submission("accept", fixes={"setting": "A school canteen at lunch."}))
    submit(annotator("finn@review.test"), task, Submission("accept", fixes={"setting": "A hospital ward at night."}))
    first = pull_run(store, config)
    assert first.queue == {KITCHEN: "setting corrected differently by 2 annotators"} and _state(store, KITCHEN) == "in_review"
    assert first.disagreements == {KITCHEN: ["setting corrected differently by 2 annotators (erin@review.test, finn@review.test)"]}
    assert json.loads((store.task_dir(KITCHEN) / "metadata.json").read_text())["danger_formalization"]["setting"] == original

    submit(annotator(LEAD), task, Submission("accept", adjudicating=True))  # every box left as it was
    second = pull_run(store, config)
    assert second.accepted == [KITCHEN] and second.disagreements == {}
    metadata = json.loads((store.task_dir(KITCHEN) / "metadata.json").read_text())
    assert metadata["danger_formalization"]["setting"] == original
    assert metadata["review"]["final_rule"] == "adjudicated" and metadata["review"]["corrections"] == []


@pytest.mark.parametrize(
    "options",
    [
        {"annotators_per_task": 0},
        {"annotators_per_task": -1},
        {"overlap_share": 0.0},
        {"overlap_share": 1.5},
        {"overlap_share": float("nan")},
    ],
)
def test_a_bad_overlap_is_refused_before_anything_changes(make_run, config, admin, options):
    store = make_run([KITCHEN])
    first = push_run(store, config)
    with pytest.raises(ReviewError, match=r"must be a (whole )?number (from 1 to 100|> 0 and <= 1)"):
        push_run(store, config, **options)
    project = admin.projects.get(first.project_id)
    assert (project.maximum_annotations, project.overlap_cohort_percentage) == (1, 100)


def test_raising_the_overlap_reopens_decided_tasks_that_now_lack_votes(make_run, config, annotator, admin):
    store = make_run([KITCHEN, BLEACH, DOG, CRATE])
    first = push_run(store, config, annotators_per_task=2)
    ann, bob = annotator("ann@review.test"), annotator("bob@review.test")
    for task_id in (KITCHEN, BLEACH):
        submit(ann, ls_task_id(store, task_id), Submission("accept"))
        submit(bob, ls_task_id(store, task_id), Submission("accept"))
    assert sorted(pull_run(store, config).accepted) == [BLEACH, KITCHEN]

    raised = push_run(store, config, annotators_per_task=3)
    assert any("now wants 3 annotator(s) per task (it wanted 2 annotator(s) per task)" in w for w in raised.warnings)
    assert raised.decisions.reopened == {BLEACH: "waiting for votes: 2 of 3", KITCHEN: "waiting for votes: 2 of 3"}
    assert "re-opened: kitchen_mopped_floor_hot_soup: waiting for votes: 2 of 3" in raised.summary()
    assert {r.task_id: r.state for r in store.ledger.records()} == dict.fromkeys([KITCHEN, BLEACH, DOG, CRATE], "in_review")
    assert store.ledger.history(next(r.record_id for r in store.ledger.records() if r.task_id == KITCHEN))[-1].reason == (
        "review re-opened: waiting for votes: 2 of 3"
    )
    assert review_status(store).waiting[KITCHEN] == "2 of 3"

    # two annotators on half of the tasks, one on the others (Label Studio picks which, tasks with votes first)
    shared = push_run(store, config, annotators_per_task=2, overlap_share=0.5)
    assert any("2 annotators on 50% of tasks, 1 on the others" in w for w in shared.warnings)
    overlaps = {t.data["task_id"]: t.overlap for t in admin.tasks.list(project=first.project_id)}
    assert sorted(overlaps.values()) == [1, 1, 2, 2] and overlaps[KITCHEN] == overlaps[BLEACH] == 2
    assert sorted(shared.decisions.accepted) == [BLEACH, KITCHEN]
    single = next(task_id for task_id, overlap in overlaps.items() if overlap == 1)
    submit(ann, ls_task_id(store, single), Submission("reject", reasons=("other",)))
    assert pull_run(store, config).rejected == [single]  # one vote decides a task outside the shared share


def test_an_existing_project_gets_this_versions_review_interface(make_run, config, admin):
    store = make_run([KITCHEN])
    first = push_run(store, config)
    current = admin.projects.get(first.project_id).label_config
    admin.projects.update(id=first.project_id, label_config=current.replace("sf-root", "sf-root-old"))
    again = push_run(store, config)
    assert admin.projects.get(first.project_id).label_config.strip() == LABELING_CONFIG.read_text(encoding="utf-8").strip()
    assert any("now shows this version's review interface" in w for w in again.warnings)
    assert not push_run(store, config).warnings  # once it is current, nothing is said


def test_two_pushes_at_once_import_each_task_once(make_run, config, admin):
    from concurrent.futures import ThreadPoolExecutor

    from safeforge.runs.lock import RunLocked

    store = make_run([KITCHEN, BLEACH, DOG])

    def push():
        try:
            return push_run(store, config)
        except RunLocked as exc:  # the other push holds the run: said, never a second import
            return exc

    with ThreadPoolExecutor(2) as pool:
        outcomes = list(pool.map(lambda _: push(), range(2)))
    results = [o for o in outcomes if not isinstance(o, Exception)]
    assert results and all(isinstance(o, RunLocked) or o in results for o in outcomes)
    tasks = list(admin.tasks.list(project=results[0].project_id))
    assert sorted(t.data["task_id"] for t in tasks) == sorted([KITCHEN, BLEACH, DOG])


def test_a_vote_on_a_duplicate_copy_counts_and_remove_duplicates_moves_it(make_run, config, admin, annotator):
    store = make_run([KITCHEN])
    first = push_run(store, config, annotators_per_task=2)
    original = ls_task_id(store, KITCHEN)
    copy = admin.tasks.create(project=first.project_id, data=admin.tasks.get(original).data).id  # e.g. a push from an older version
    submit(annotator("ann@review.test"), original, Submission("accept"))
    submit(annotator("bob@review.test"), copy, Submission("accept", lead_time=17.0))
    pulled = pull_run(store, config)
    assert pulled.accepted == [KITCHEN]  # bob's vote on the copy is the second vote
    assert any(f"{KITCHEN} is in project {first.project_id} 2 times" in flag and "--remove-duplicates" in flag for flag in pulled.flags)
    status = review_status(store)
    assert status.duplicates == {KITCHEN: [copy]} and "--remove-duplicates` merges them" in status.format_table()

    merged = push_run(store, config, remove_duplicates=True)
    assert (merged.duplicates_removed, merged.annotations_moved) == (1, 1)
    assert [t.id for t in admin.tasks.list(project=first.project_id)] == [original]
    moved = next(a for a in admin.tasks.get(original).annotations if a["id"] != _first_annotation(admin, original))
    assert moved["lead_time"] == 17.0
    again = pull_run(store, config)
    assert again.changed == [] and again.disagreements == {}  # the moved vote is still bob's, not the admin's
    assert sorted(a["annotator"] for a in _review(store, KITCHEN)["annotations"]) == ["ann@review.test", "bob@review.test"]
    assert review_status(store).duplicates == {}


def _first_annotation(admin, task: int) -> int:
    return min(a["id"] for a in admin.tasks.get(task).annotations)
