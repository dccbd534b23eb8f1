"""The review's pure parts: kappa and agreement, the decision rule, plain-word conditions, the plan
diff, the task rendering and the labeling config."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from safeforge.review import (
    CORRECTABLE_FIELDS,
    LABELING_CONFIG,
    REJECTION_REASONS,
    ReviewAnnotation,
    agreement,
    build_task,
    cohen_kappa,
    condition_in_words,
    diff_plans,
    final_decision,
)
from safeforge.review._agreement import task_agreement


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


def test_agreement_pools_pairs_and_weights_kappa_by_shared_tasks():
    votes = {
        "t1": {"ann": "accept", "bob": "accept"},
        "t2": {"ann": "accept", "bob": "reject"},
        "t3": {"ann": "reject", "bob": "reject", "cy": "reject"},
        "t4": {"ann": "accept"},  # one annotator: not counted
    }
    result = agreement(votes)
    # pairs: t1 (1 agree), t2 (0), t3 (3 agree of 3) -> 4 of 5 = 80 %
    assert (result.tasks, result.comparisons, result.percent) == (3, 5, 80.0)
    by_pair = {p.annotators: p for p in result.pairs}
    # ann vs bob over t1..t3: ann a,a,r  bob a,r,r: p_o 2/3, p_e 2/3*1/3 + 1/3*2/3 = 4/9 -> kappa 0.4
    assert by_pair[("ann", "bob")].cohen_kappa == pytest.approx(0.4)
    assert by_pair[("ann", "bob")].tasks == 3
    assert by_pair[("ann", "cy")].cohen_kappa is None  # one shared task, same answer: undefined
    # only (ann, bob) has a defined kappa, so it is the run's kappa
    assert result.cohen_kappa == pytest.approx(0.4)
    assert task_agreement(votes["t2"], result) == {"annotators": 2, "percent": 0.0, "cohen_kappa": 0.4}
    assert task_agreement(votes["t4"], result) is None
    assert agreement({"t": {"ann": "accept"}}) is None


def _annotation(id, annotator, decision, *, reasons=(), note="", adjudicating=False, at="2026-01-01T10:00"):
    return ReviewAnnotation(id, annotator, decision, list(reasons), note, adjudicating, {}, at, 10.0)


def test_decision_rule():
    accept = _annotation(1, "ann", "accept", at="2026-01-01T10:00")
    reject = _annotation(2, "bob", "reject", reasons=["plans_not_sensible"], note="odd", at="2026-01-01T11:00")
    assert final_decision([]) is None
    assert final_decision([_annotation(9, "ann", None)]) is None  # no choice made: does not count
    assert final_decision([accept]).rule == "single"
    both_accept = final_decision([accept, _annotation(3, "bob", "accept")])
    assert (both_accept.decision, both_accept.rule) == ("accepted", "unanimous")
    stands = final_decision([accept, reject])
    assert (stands.decision, stands.rule, stands.reasons, stands.notes) == ("rejected", "reject_stands", ["plans_not_sensible"], ["odd"])
    overruled = final_decision([accept, reject, _annotation(4, "cy", "accept", adjudicating=True, at="2026-01-01T12:00")])
    assert (overruled.decision, overruled.rule, overruled.reasons) == ("accepted", "adjudicated", [])
    assert overruled.explanation == "adjudicated by cy"
    upheld = final_decision([accept, _annotation(5, "cy", "reject", reasons=["other"], adjudicating=True)])
    assert (upheld.decision, upheld.rule, upheld.reasons) == ("rejected", "adjudicated", ["other"])


def test_annotation_from_label_studio_reads_aliases_labels_and_users():
    raw = {
        "id": 7,
        "completed_by": 3,
        "created_at": "2026-01-01T10:00:00Z",
        "lead_time": 12.5,
        "result": [
            {"from_name": "decision", "value": {"choices": ["Reject"]}},
            {"from_name": "reasons", "value": {"choices": ["plans_not_sensible", "Implausible setting", "bogus"]}},
            {"from_name": "note", "value": {"text": ["too ", "short"]}},
            {"from_name": "fix_setting", "value": {"text": ["A flat."]}},
        ],
    }
    annotation = ReviewAnnotation.from_label_studio(raw, {3: "ann@x"})
    assert (annotation.annotator, annotation.decision, annotation.lead_time) == ("ann@x", "reject", 12.5)
    assert annotation.reasons == ["plans_not_sensible", "implausible_setting"]
    assert annotation.note == "too \nshort"
    assert annotation.fields == {"setting": "A flat."}
    assert ReviewAnnotation.from_label_studio({**raw, "completed_by": {"id": 4}}, {}).annotator == "user 4"


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
    assert '<td class="sf-step sf-only">(dry_floor kitchen)</td>' in data["plans_html"]
    assert '(carry_pot soup_pot kitchen hallway) <span class="sf-danger">⚠</span>' in data["plans_html"]
    assert "(define (domain" in data["pddl_html"] and "danger" not in data["pddl_html"].split("problem.pddl")[0]
    assert "&lt;b&gt;unmotivated&lt;/b&gt;" in data["checks_html"]
    assert "predictions" not in task  # nothing pre-selected: the judge's verdict is information only
    assert "not approved" in data["checks_html"] and "nothing is pre-selected" in data["checks_html"]


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
        "header",
        "workbench_html",
        *(f"current_{f}" for f in CORRECTABLE_FIELDS),
    }
    assert variables == sample
