"""The review's pure parts: kappa and agreement, the decision rule, plain-word conditions, the plan
diff, the task rendering and the labeling config."""

from __future__ import annotations

import json
import sqlite3
import xml.etree.ElementTree as ET

import pytest

from safeforge.review import (
    CORRECTABLE_FIELDS,
    FORMALIZATION_CONFIG,
    LABELING_CONFIG,
    REJECTION_REASONS,
    ReviewAnnotation,
    ReviewRules,
    TaskVotes,
    agreement,
    build_task,
    cohen_kappa,
    condition_in_words,
    decide,
    diff_plans,
    krippendorff_alpha,
)
from safeforge.review._agreement import task_agreement
from safeforge.review._marks import FIELD_LABELS, marks_html
from safeforge.review._pull import merge_disagreements
from safeforge.runs.ledger import RunLedger


def test_kappa_matches_the_textbook_example():
    # Wikipedia's example: 50 proposals; both yes 20, A yes/B no 5, A no/B yes 10, both no 15.
    first = ["yes"] * 20 + ["yes"] * 5 + ["no"] * 10 + ["no"] * 15
    second = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
    # p_o = 35/50 = 0.7; p_e = 0.5*0.6 + 0.5*0.4 = 0.5; kappa = 0.2/0.5 = 0.4
    assert cohen_kappa(first, second) == pytest.approx(0.4)


def test_kappa_is_undefined_without_variation_and_needs_the_same_items():
    assert cohen_kappa(["accept"] * 3, ["accept"] * 3) is None
    assert cohen_kappa(["accept", "reject"], ["reject", "accept"]) == pytest.approx(-1.0)
    with pytest.raises(ValueError, match="same items"):
        cohen_kappa(["accept"], ["accept", "reject"])


def test_krippendorffs_alpha_matches_krippendorffs_own_example():
    # Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: four observers,
    # twelve units, nominal values, missing data; alpha = 0.743. Unit 12 has one value: not pairable.
    units = [
        ["1", "1", "1"],
        ["2", "2", "3", "2"],
        ["3", "3", "3", "3"],
        ["3", "3", "3", "3"],
        ["2", "2", "2", "2"],
        ["1", "2", "3", "4"],
        ["4", "4", "4", "4"],
        ["1", "1", "2", "1"],
        ["2", "2", "2", "2"],
        ["5", "5", "5"],
        ["1", "1"],
        ["3"],
    ]
    assert krippendorff_alpha(units) == pytest.approx(0.743, abs=0.0005)
    assert krippendorff_alpha([["accept", "accept"], ["accept", "accept", "accept"]]) is None  # no variation
    # by hand: units a/a, a/r, r/r, r/r; coincidences o_aa 2, o_ar = o_ra 1, o_rr 4; n_a 3, n_r 5, n 8;
    # D_o = 2, D_e = (3*5 + 5*3) / 7; alpha = 1 - 2 / (30/7) = 8/15
    assert krippendorff_alpha([["a", "a"], ["a", "r"], ["r", "r"], ["r", "r"]]) == pytest.approx(8 / 15)


def test_agreement_counts_three_raters_tasks_still_waiting_and_each_annotators_record():
    tasks = [
        TaskVotes({"ann": "accept", "bob": "accept"}, "accepted", {"ann": 10.0, "bob": 30.0}),
        TaskVotes({"ann": "accept", "bob": "reject"}, None, {"ann": 20.0}),  # split, waiting for an adjudicator
        TaskVotes({"ann": "reject", "bob": "reject", "cy": "reject"}, "rejected", {"cy": 5.0}),
        TaskVotes({"ann": "accept"}, None),  # one vote: no pair, but ann's record counts it
    ]
    result = agreement(tasks)
    # pairs: t1 (1 agree), t2 (0), t3 (3 agree of 3) -> 4 of 5 = 80 %
    assert (result.tasks, result.comparisons, result.percent) == (3, 5, 80.0)
    by_pair = {p.annotators: p for p in result.pairs}
    # ann vs bob over t1..t3: ann a,a,r  bob a,r,r: p_o 2/3, p_e 2/3*1/3 + 1/3*2/3 = 4/9 -> kappa 0.4
    assert by_pair[("ann", "bob")].cohen_kappa == pytest.approx(0.4)
    assert by_pair[("ann", "cy")].cohen_kappa is None  # one shared task, same answer: undefined
    assert result.cohen_kappa == pytest.approx(0.4)
    # alpha over t1..t3: o_aa 2, o_ar = o_ra 1, o_rr 3 (t3: 6 ordered pairs of weight 1/2); n_a 3, n_r 4, n 7;
    # D_o = 2, D_e = 24/6 = 4; alpha = 1 - 2/4 = 0.5
    assert result.krippendorff_alpha == pytest.approx(0.5)
    rows = {row.annotator: row for row in result.annotators}
    assert (rows["ann"].votes, rows["ann"].decided, rows["ann"].agreed_with_final) == (4, 2, 2)
    assert (rows["bob"].decided, rows["bob"].agreed_with_final, rows["bob"].percent_with_final) == (2, 2, 100.0)
    assert rows["ann"].median_lead_time_s == 15.0
    assert (rows["cy"].votes, rows["cy"].percent_with_final, rows["cy"].median_lead_time_s) == (1, 100.0, 5.0)
    assert rows["bob"].median_lead_time_s == 30.0
    assert task_agreement(tasks[1].votes) == {"annotators": 2, "percent": 0.0}
    assert task_agreement(tasks[3].votes) is None
    empty = agreement([TaskVotes({"ann": "accept"})])
    assert (empty.tasks, empty.percent, empty.krippendorff_alpha) == (0, None, None)
    assert "no task has two votes yet" in empty.lines()[0]


def _annotation(id, annotator, decision, *, reasons=(), note="", adjudicating=False, at="2026-01-01T10:00", fields=None, author=""):
    return ReviewAnnotation(id, annotator, decision, list(reasons), note, adjudicating, fields or {}, at, 10.0, author=author or annotator)


ORIGINAL = {name: f"original {name}" for name in CORRECTABLE_FIELDS}
LEAD = frozenset({"lead@x"})


def test_votes_decide_when_enough_annotators_voted():
    accept = _annotation(1, "ann", "accept", at="2026-01-01T10:00")
    reject = _annotation(2, "bob", "reject", reasons=["plans_not_sensible"], note="odd", at="2026-01-01T11:00")
    assert decide([], ReviewRules(), ORIGINAL).waiting_for == "votes"
    assert decide([_annotation(9, "ann", None)], ReviewRules(), ORIGINAL).decision is None  # no choice: does not count
    assert decide([accept], ReviewRules(), ORIGINAL).decision.rule == "single"
    waiting = decide([accept], ReviewRules(required=2), ORIGINAL)
    assert (waiting.decision, waiting.waiting_for, waiting.progress) == (None, "votes", "1 of 2")
    both = decide([accept, _annotation(3, "bob", "accept")], ReviewRules(required=2), ORIGINAL).decision
    assert (both.decision, both.rule) == ("accepted", "unanimous")
    stands = decide([accept, reject], ReviewRules(required=2), ORIGINAL)
    assert (stands.decision.decision, stands.decision.rule, stands.decision.reasons) == (
        "rejected",
        "reject_stands",
        ["plans_not_sensible"],
    )
    assert [d.kind for d in stands.disagreements] == ["votes"] and stands.disagreements[0].summary == "votes split: 1 accept, 1 reject"
    changed_mind = decide([accept, _annotation(4, "ann", "reject", at="2026-01-01T12:00")], ReviewRules(), ORIGINAL)
    assert changed_mind.votes == {"ann": "reject"} and changed_mind.decision.decision == "rejected"


def test_with_adjudicators_named_split_votes_wait_for_one_and_only_they_decide():
    ann = _annotation(1, "ann", "accept")
    bob = _annotation(2, "bob", "accept", at="2026-01-01T10:01")
    cy = _annotation(3, "cy", "reject", reasons=["other"], at="2026-01-01T10:02")
    rules = ReviewRules(required=3, adjudicators=LEAD)
    split = decide([ann, bob, cy], rules, ORIGINAL)
    assert (split.decision, split.waiting_for) == (None, "adjudication")
    assert split.explanation == "waiting for an adjudicator: votes split: 2 accept, 1 reject"
    # a voter ticks "I adjudicate" and accepts: ignored, flagged, changes nothing
    voter = _annotation(4, "ann", "accept", adjudicating=True, at="2026-01-01T11:00")
    still = decide([ann, bob, cy, voter], rules, ORIGINAL)
    assert still.waiting_for == "adjudication" and still.ignored == {4: "its author is not a named adjudicator"}
    assert still.votes == {"ann": "accept", "bob": "accept", "cy": "reject"}
    assert any(d.kind == "ignored_adjudication" and d.annotators == ("ann",) for d in still.disagreements)
    # a named adjudicator who voted on the task cannot adjudicate it either
    lead_vote = _annotation(7, "lead@x", "reject", at="2026-01-01T10:03")
    lead_adjudicates = _annotation(8, "lead@x", "accept", adjudicating=True, at="2026-01-01T11:30")
    voted = decide([ann, bob, lead_vote, lead_adjudicates], rules, ORIGINAL)
    assert (voted.waiting_for, voted.ignored) == ("adjudication", {8: "its author voted on this task"})
    # someone who is not named: ignored as an adjudication, counted as their vote
    outsider = decide([ann, bob, cy, _annotation(5, "dan", "accept", adjudicating=True)], rules, ORIGINAL)
    assert outsider.ignored == {5: "its author is not a named adjudicator"} and outsider.votes["dan"] == "accept"
    # the named adjudicator decides, whatever the votes; the disagreement is theirs to settle
    lead = _annotation(6, "lead@x", "accept", adjudicating=True, at="2026-01-01T12:00")
    settled = decide([ann, bob, cy, lead], rules, ORIGINAL)
    assert (settled.decision.decision, settled.decision.rule, settled.decision.explanation) == (
        "accepted",
        "adjudicated",
        "adjudicated by lead@x",
    )
    # ... even before all votes are in
    assert decide([ann, lead], rules, ORIGINAL).decision.rule == "adjudicated"
    # with no adjudicator named, nobody adjudicates and a reject stands
    unnamed = decide([ann, bob, cy, lead], ReviewRules(required=3), ORIGINAL)
    assert unnamed.decision.rule == "reject_stands" and unnamed.ignored == {6: "no adjudicator is named for this run"}


def test_conflicting_corrections_wait_for_an_adjudicator_whose_boxes_alone_apply():
    erin = _annotation(1, "erin", "accept", fields={**ORIGINAL, "setting": "A school canteen."})
    finn = _annotation(2, "finn", "accept", fields={**ORIGINAL, "setting": "A hospital ward."}, at="2026-01-01T10:05")
    conflict = decide([erin, finn], ReviewRules(required=2, adjudicators=LEAD), ORIGINAL)
    assert conflict.waiting_for == "adjudication"
    [found] = conflict.disagreements
    assert (found.kind, found.key, found.field, found.annotators) == ("corrections", "corrections:setting", "setting", ("erin", "finn"))
    later_stands = decide([erin, finn], ReviewRules(required=2), ORIGINAL)
    assert later_stands.decision.decision == "accepted" and [a.id for a in later_stands.applied] == [1, 2]
    lead = _annotation(3, "lead@x", "accept", adjudicating=True, fields=dict(ORIGINAL), at="2026-01-01T11:00")
    settled = decide([erin, finn, lead], ReviewRules(required=2, adjudicators=LEAD), ORIGINAL)
    assert settled.decision.rule == "adjudicated" and [a.id for a in settled.applied] == [3]  # the original text stays


def test_a_disagreement_is_kept_open_until_resolved_then_kept_with_how():
    found = decide(
        [_annotation(1, "ann", "accept"), _annotation(2, "bob", "reject")], ReviewRules(required=2, adjudicators=LEAD), ORIGINAL
    ).disagreements
    first = merge_disagreements([], found, None, "2026-01-01T10:00")
    assert [(d.key, d.found_at, d.resolved_at) for d in first] == [("votes", "2026-01-01T10:00", None)]
    again = merge_disagreements(first, found, None, "2026-01-01T11:00")
    assert again == first  # the next pull keeps it as it was: same record, still open
    agreed = merge_disagreements(again, [], None, "2026-01-01T12:00")
    assert [(d.resolved_at, d.resolution) for d in agreed] == [("2026-01-01T12:00", "the votes now agree")]
    lead = _annotation(3, "lead@x", "reject", adjudicating=True)
    settled = merge_disagreements(first, found, lead, "2026-01-01T13:00")
    assert [(d.resolution, d.resolved_by, d.found_at) for d in settled] == [("adjudicated", "lead@x", "2026-01-01T10:00")]
    assert merge_disagreements(settled, found, lead, "2026-01-01T14:00") == settled  # not recorded twice


def test_an_annotation_edited_by_another_user_or_moved_from_a_duplicate():
    raw = {
        "id": 7,
        "completed_by": 3,
        "created_at": "2026-01-01T10:00:00Z",
        "updated_at": "2026-01-01T10:00:00.4Z",
        "lead_time": 12.5,
        "result": [
            {"from_name": "decision", "value": {"choices": ["Reject"]}},
            {"from_name": "reasons", "value": {"choices": ["plans_not_sensible", "Implausible setting", "bogus"]}},
            {"from_name": "note", "value": {"text": ["too ", "short"]}},
            {"from_name": "fix_setting", "value": {"text": ["A flat."]}},
        ],
    }
    users = {3: "ann@x", 4: "admin@x"}
    annotation = ReviewAnnotation.from_label_studio(raw, users)
    assert (annotation.annotator, annotation.decision, annotation.lead_time, annotation.edited_by_other) == ("ann@x", "reject", 12.5, False)
    assert annotation.reasons == ["plans_not_sensible", "implausible_setting"]
    assert annotation.note == "too \nshort" and annotation.fields == {"setting": "A flat."}
    edited = ReviewAnnotation.from_label_studio({**raw, "updated_by": 4, "updated_at": "2026-01-02T09:00:00Z"}, users)
    assert (edited.annotator, edited.author, edited.edited_by_other) == ("admin@x", "ann@x", True)
    found = decide([edited], ReviewRules(), ORIGINAL).disagreements
    assert [(d.kind, d.annotators) for d in found] == [("edited_vote", ("ann@x", "admin@x"))]
    # moved by --remove-duplicates (import_id set, saved by an admin at creation): still ann's
    moved = ReviewAnnotation.from_label_studio({**raw, "updated_by": 4, "import_id": 2}, users)
    assert (moved.annotator, moved.edited_by_other) == ("ann@x", False)
    assert ReviewAnnotation.from_label_studio({**raw, "completed_by": {"id": 5}}, {}).annotator == "user 5"


def test_marks_show_in_compare_all_which_fields_each_annotation_changed():
    erin = _annotation(11, "erin", "accept", fields={**ORIGINAL, "setting": "A canteen.", "robot_task": "Carry <soup>"})
    finn = _annotation(12, "finn", "reject", fields=dict(ORIGINAL))
    outcome = decide([erin, finn], ReviewRules(required=2, adjudicators=LEAD), ORIGINAL)
    html = marks_html([erin, finn], outcome, ORIGINAL)
    assert ':has(> div > [data-annotation-id="11"]) > .sf-root .sf-fix-setting' in html
    assert ':has(> div > [data-annotation-id="11"]) > .sf-root .sf-fix-robot_task' in html
    assert '"✎ changed: setting, robot task"' in html and '[data-annotation-id="12"]) > .sf-root .sf-fix' not in html
    assert '[data-annotation-id="12"]) > .sf-root::before { content: "finn · annotation 12 · reject";' in html  # its column named
    assert '<div class="sf-queue-note">Needs adjudication: votes split: 1 accept, 1 reject</div>' in html
    alone = marks_html([finn], decide([finn], ReviewRules(), ORIGINAL), ORIGINAL)
    assert ".sf-fix" not in alone and "sf-queue-note" not in alone
    assert set(FIELD_LABELS) == set(CORRECTABLE_FIELDS)


def test_the_ledger_keeps_disagreements_and_lets_review_reopen_a_decision(tmp_path):
    ledger = RunLedger(tmp_path / "ledger.sqlite")
    ledger.register([("r", "neiss", "")])
    for state in ("extracted", "checked", "in_review", "accepted", "in_review", "rejected_by_review"):
        assert ledger.transition("r", state, "why")
    entry = {"key": "votes", "kind": "votes", "summary": "votes split: 1 accept, 1 reject", "found_at": "2026-01-01T10:00"}
    assert ledger.set_disagreements("r", [entry]) and not ledger.set_disagreements("r", [entry])
    assert ledger.disagreements(open_only=True) == {"r": [entry]}
    resolved = {**entry, "resolved_at": "2026-01-01T11:00", "resolution": "adjudicated"}
    assert ledger.set_disagreements("r", [resolved])
    assert ledger.disagreements(open_only=True) == {} and ledger.disagreements() == {"r": [resolved]}
    # the formalization review's disagreements of the same record are kept apart
    assert ledger.set_disagreements("r", [entry], review="formalizations")
    assert ledger.disagreements(open_only=True, review="formalizations") == {"r": [entry]} and ledger.disagreements() == {"r": [resolved]}


def test_a_ledger_from_before_the_formalization_review_keeps_its_disagreements_as_the_task_reviews(tmp_path):
    entry = {"key": "votes", "kind": "votes", "summary": "votes split: 1 accept, 1 reject", "found_at": "2026-01-01T10:00"}
    with sqlite3.connect(tmp_path / "ledger.sqlite") as db:  # the table as older versions made it
        db.execute(
            "CREATE TABLE disagreements (record_id TEXT NOT NULL, key TEXT NOT NULL, found_at TEXT NOT NULL, kind TEXT NOT NULL, "
            "summary TEXT NOT NULL, resolved_at TEXT, resolution TEXT, entry TEXT NOT NULL, PRIMARY KEY (record_id, key, found_at))"
        )
        db.execute(
            "INSERT INTO disagreements VALUES ('r', 'votes', '2026-01-01T10:00', 'votes', 'split', NULL, NULL, ?)", (json.dumps(entry),)
        )
    db.close()
    ledger = RunLedger(tmp_path / "ledger.sqlite")
    assert ledger.disagreements(open_only=True) == {"r": [entry]} and ledger.disagreements(review="formalizations") == {}
    assert ledger.set_disagreements("r", [entry], review="formalizations")  # same key and time, another review
    assert RunLedger(tmp_path / "ledger.sqlite").disagreements(review="formalizations") == {"r": [entry]}


@pytest.mark.parametrize(
    "condition, words",
    [
        ("(and (floor_wet ?to) (soup_is_hot ?p))", "floor wet (to) and soup is hot (p)"),
        ("(dog_loose_in_house)", "dog loose in house"),
        ("(not (door-closed ?d))", "not door closed (d)"),
        ("(or (a) (and (b ?x) (c)))", "either a or [b (x) and c]"),
        ("(exists (?p - person) (near ?p ?l))", "some person p with near (p, l)"),
        ("(> (weight ?b) 20)", "weight(b) > 20"),
        ("(and (broken", "(and (broken"),  # unreadable: shown as it is
    ],
)
def test_conditions_in_plain_words(condition, words):
    assert condition_in_words(condition) == words


def test_plan_diff_aligns_and_marks_differences():
    safe = ["(mop k)", "(dry k)", "(pick p)", "(carry p k h)"]
    unsafe = ["(mop k)", "(pick p)", "(carry p k d)"]
    rows = [(r.safe, r.unsafe, r.kind) for r in diff_plans(safe, unsafe)]
    assert rows == [
        ("(mop k)", "(mop k)", "same"),
        ("(dry k)", None, "only_safe"),
        ("(pick p)", "(pick p)", "same"),
        ("(carry p k h)", "(carry p k d)", "changed"),
    ]


def test_build_task_renders_everything_and_escapes_task_text(example_copy):
    folder = example_copy("kitchen_mopped_floor_hot_soup")
    metadata = json.loads((folder / "metadata.json").read_text())
    metadata["danger_formalization"]["setting"] = "<script>alert(1)</script> kitchen"
    metadata["checks"] = [{"name": "structure", "ok": True, "detail": "2 danger effect(s)"}]
    metadata["quality_judge"] = {"approved": False, "issues": ["The drying step is <b>unmotivated</b>."]}
    (folder / "metadata.json").write_text(json.dumps(metadata))
    task = build_task(folder, "normbank_3", "normbank")
    data = task["data"]
    assert not [key for key, value in data.items() if key.endswith("_html") and "<script>" in value]
    assert "&lt;script&gt;alert(1)&lt;/script&gt; kitchen" in data["task_html"]
    assert data["current_setting"] == "<script>alert(1)</script> kitchen"  # a text box's value, not HTML
    assert data["current_assumptions"].count("\n") == 2
    assert "floor wet (from) and soup is hot (p)" in data["danger_html"]
    assert "carry_pot(p: pot, from: room, to: room)" in data["danger_html"]
    # the safe plan's drying step is only in the safe plan; the unsafe plan's first carry raises danger
    assert '<td class="sf-step sf-only">(dry_floor kitchen floor_towel)</td>' in data["plans_html"]
    assert '(carry_pot soup_pot kitchen hallway) <span class="sf-danger">⚠</span>' in data["plans_html"]
    assert "(define (domain" in data["pddl_html"] and "danger" not in data["pddl_html"].split("problem.pddl")[0]
    assert "&lt;b&gt;unmotivated&lt;/b&gt;" in data["checks_html"]
    assert "predictions" not in task  # nothing pre-selected: the judge's verdict is information only
    assert "not approved" in data["checks_html"] and "nothing is pre-selected" in data["checks_html"]
    assert (data["needs_adjudication"], data["marks_html"]) == ("", "")  # review pull fills them in


def test_labeling_config_matches_what_push_sends_and_pull_reads():
    root = ET.parse(LABELING_CONFIG).getroot()
    tags = {element.get("name"): element for element in root.iter() if element.get("name")}
    objects = {name for name, e in tags.items() if e.tag == "HyperText"}
    for name in ("decision", "reasons", "note", "adjudication", *(f"fix_{f}" for f in CORRECTABLE_FIELDS)):
        assert name in tags, name
        assert tags[name].get("toName") in objects
    assert [c.get("alias") for c in tags["decision"]] == ["accept", "reject"]
    assert {c.get("alias"): c.get("value") for c in tags["reasons"]} == REJECTION_REASONS
    variables = {e.get("value")[1:] for e in root.iter() if (e.get("value") or "").startswith("$")}
    sample = {
        "task_html",
        "danger_html",
        "details_html",
        "checks_html",
        "plans_html",
        "pddl_html",
        "source_html",
        "marks_html",
        "header",
        "workbench_html",
        *(f"current_{f}" for f in CORRECTABLE_FIELDS),
    }
    assert variables == sample


@pytest.mark.parametrize("interface", [LABELING_CONFIG, FORMALIZATION_CONFIG], ids=["tasks", "formalizations"])
def test_each_correction_box_sits_where_its_compare_all_mark_looks(interface):
    root = ET.parse(interface).getroot()
    views = {e.get("className") for e in root.iter("View")}
    assert {f"sf-fix sf-fix-{f}" for f in CORRECTABLE_FIELDS} <= views and "sf-corrections" in views
    fix_views = [e for e in root.iter("View") if (e.get("className") or "").startswith("sf-fix ")]
    assert all([t.get("name") for t in view.iter("TextArea")] == [f"fix_{view.get('className').split('sf-fix-')[1]}"] for view in fix_views)
    assert "$marks_html" in {e.get("value") for e in root.iter("HyperText")} and root.get("className") == "sf-root"
