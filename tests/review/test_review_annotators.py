"""Several annotators on the real Label Studio server: a decision waits for every required vote,
later and edited votes change it (a recorded transition), and each vote is its author's."""

from __future__ import annotations

import json

from review_helpers import Submission, ls_task_id, submit

from safeforge.review import pull_run, push_run, review_status
from safeforge.review._task_data import LABELING_CONFIG

KITCHEN = "kitchen_mopped_floor_hot_soup"


def _state(store, task_id: str) -> str:
    return next(r for r in store.ledger.records() if r.task_id == task_id).state


def test_a_decision_waits_for_the_second_annotator_and_follows_a_later_reject(make_run, config, annotator):
    store = make_run([KITCHEN])
    push_run(store, config, annotators_per_task=2)
    task = ls_task_id(store, KITCHEN)
    submit(annotator("alice@review.test"), task, Submission("accept", lead_time=20.0))
    first = pull_run(store, config)
    assert (first.accepted, first.pending, first.progress) == ([], [KITCHEN], {KITCHEN: "1 of 2"})
    assert _state(store, KITCHEN) == "in_review"
    status = review_status(store)
    assert status.waiting == {KITCHEN: "1 of 2"} and f"{KITCHEN}: 1 of 2" in status.format_table()

    submit(annotator("bob@review.test"), task, Submission("reject", reasons=("implausible_setting",), lead_time=35.0))
    second = pull_run(store, config)
    assert second.rejected == [KITCHEN] and _state(store, KITCHEN) == "rejected_by_review"
    review = json.loads((store.task_dir(KITCHEN) / "metadata.json").read_text())["review"]
    assert sorted((a["annotator"], a["decision"]) for a in review["annotations"]) == [
        ("alice@review.test", "accept"),
        ("bob@review.test", "reject"),
    ]
    status = review_status(store)
    assert status.waiting == {}
    assert status.to_dict()["annotators"]["bob@review.test"] == {"annotations": 1, "median_lead_time_s": 35.0}


def test_a_vote_edited_by_another_user_counts_as_theirs_and_changes_the_decision(make_run, config, annotator, admin):
    store = make_run([KITCHEN])
    push_run(store, config)
    carol = annotator("carol@review.test")
    annotation = submit(carol, ls_task_id(store, KITCHEN), Submission("accept"))
    assert pull_run(store, config).accepted == [KITCHEN]
    unchanged = pull_run(store, config)
    assert unchanged.changed == [] and _state(store, KITCHEN) == "accepted"

    # the admin opens carol's annotation and changes accept to reject
    result = admin.annotations.get(annotation).result
    for item in result:
        if item["from_name"] == "decision":
            item["value"] = {"choices": ["reject"]}
    admin.annotations.update(annotation, result=result)
    changed = pull_run(store, config)
    assert changed.changed == [KITCHEN] and _state(store, KITCHEN) == "rejected_by_review"
    assert any("was changed by admin@review.test" in flag for flag in changed.flags)
    history = store.ledger.history(next(r.record_id for r in store.ledger.records()))
    assert history[-1].to_state == "rejected_by_review" and history[-1].reason.startswith("review changed: rejected by admin")


def test_annotators_per_task_on_an_existing_project_is_applied_and_said(make_run, config, admin):
    store = make_run([KITCHEN])
    first = push_run(store, config)
    assert admin.projects.get(first.project_id).maximum_annotations == 1
    again = push_run(store, config, annotators_per_task=3)
    assert admin.projects.get(first.project_id).maximum_annotations == 3
    assert any("now wants 3 annotator(s) per task" in w for w in again.warnings)


def test_an_existing_project_gets_this_versions_review_interface(make_run, config, admin):
    store = make_run([KITCHEN])
    first = push_run(store, config)
    current = admin.projects.get(first.project_id).label_config
    admin.projects.update(id=first.project_id, label_config=current.replace("sf-root", "sf-root-old"))
    again = push_run(store, config)
    assert admin.projects.get(first.project_id).label_config.strip() == LABELING_CONFIG.read_text(encoding="utf-8").strip()
    assert any("now shows this version's review interface" in w for w in again.warnings)
    assert not push_run(store, config).warnings  # once it is current, nothing is said


def test_conflicting_corrections_are_flagged_and_an_adjudicator_can_keep_the_original(make_run, config, annotator):
    store = make_run([KITCHEN])
    push_run(store, config, annotators_per_task=2)
    task = ls_task_id(store, KITCHEN)
    original = json.loads((store.task_dir(KITCHEN) / "metadata.json").read_text())["danger_formalization"]["setting"]
    submit(annotator("erin@review.test"), task, Submission("accept", fixes={"setting": "A school canteen at lunch."}))
    submit(annotator("finn@review.test"), task, Submission("accept", fixes={"setting": "A hospital ward at night."}))
    first = pull_run(store, config)
    assert first.accepted == [KITCHEN]
    assert any("erin@review.test and finn@review.test corrected setting differently" in flag for flag in first.flags)

    submit(annotator("gina@review.test"), task, Submission("accept", adjudicating=True))  # every box left as it was
    second = pull_run(store, config)
    assert second.changed == [] and not any("corrected setting" in flag for flag in second.flags)
    metadata = json.loads((store.task_dir(KITCHEN) / "metadata.json").read_text())
    assert metadata["danger_formalization"]["setting"] == original
    assert metadata["review"]["final_rule"] == "adjudicated" and metadata["review"]["corrections"] == []


def test_two_pushes_at_once_import_each_task_once(make_run, config, admin):
    from concurrent.futures import ThreadPoolExecutor

    from safeforge.runs.lock import RunLocked

    store = make_run([KITCHEN, "bathroom_bleach_bucket", "party_leftovers_dog_chocolate"])

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
    assert sorted(t.data["task_id"] for t in tasks) == sorted([KITCHEN, "bathroom_bleach_bucket", "party_leftovers_dog_chocolate"])


def test_a_task_imported_twice_is_found_by_pull_shown_by_status_and_removed_by_push(make_run, config, admin):
    store = make_run([KITCHEN])
    first = push_run(store, config)
    original = ls_task_id(store, KITCHEN)
    payload = admin.tasks.get(original).data
    copy = admin.tasks.create(project=first.project_id, data=payload).id  # e.g. a push from an older version
    pulled = pull_run(store, config)
    assert any(f"{KITCHEN} is in project {first.project_id} 2 times" in flag and "--remove-duplicates" in flag for flag in pulled.flags)
    status = review_status(store)
    assert status.duplicates == {KITCHEN: [copy]} and "--remove-duplicates` removes them" in status.format_table()

    cleaned = push_run(store, config, remove_duplicates=True)
    assert cleaned.duplicates_removed == 1
    assert [t.id for t in admin.tasks.list(project=first.project_id)] == [original]
    pull_run(store, config)
    assert review_status(store).duplicates == {}
