"""The formalization review before code generation (DESPITE's human review of formalizations): a
run with it on holds each extracted formalization, `push --formalizations` puts them in a Label
Studio project of their own, annotators accept or reject them there, `pull --formalizations` brings
the verdicts back, and the resumed run generates the accepted ones only. Against the real Label
Studio server of the review tests and the replay server (hand-written responses, not a model's)."""

from __future__ import annotations

import asyncio
import json
import urllib.request
import uuid
from contextlib import contextmanager

import pytest
from tests_paths import REPO

from safeforge.cli.main import build_parser, main
from safeforge.cli.runs import format_overview
from safeforge.flows.review import run_summary
from safeforge.generation import (
    FormalizationVerdict,
    GenerateOptions,
    GenerationSettings,
    RunSummary,
    generate,
    record_formalization_verdict,
    waiting_formalizations,
)
from safeforge.llm import LLMConfig
from safeforge.llm.replay_server import running_replay_server
from safeforge.review import (
    CORRECTABLE_FIELDS,
    ReviewError,
    formalization_project_title,
    pull_formalizations,
    push_formalizations,
    review_report,
    review_status,
)
from safeforge.review._mapping import FORMALIZATION_MAPPING_FILE, ReviewMapping
from safeforge.runs import SpecChanged, read_spec, run_overview
from safeforge.runs.ledger import RunStore

REPLAY = REPO / "pipeline" / "llm" / "replay_responses"
# the NEISS sample's first three records: repaired in round 2, NO_DANGER, checked in round 1
REPAIRED, NO_DANGER, CHECKED = "neiss_170957638", "neiss_220159454", "neiss_220705908"
AWAITING = "awaiting_formalization_review"
NEW_ROLE = "Escort robot for a child on the way home from school"


@contextmanager
def replay():
    with running_replay_server(REPLAY, latency_ms=0) as url:
        yield url


def run(tmp_path, name: str, url: str, **options) -> RunSummary:
    """`generate` (the driver of the CLI and the flow) over the NEISS sample's first three records."""
    config = LLMConfig(base_url=url, model="deepseek-chat", db_path=tmp_path / name / "llm.sqlite", max_attempts=2, timeout_s=5.0)
    chosen = GenerateOptions(source="neiss", limit=3, out=tmp_path, run_name=name, time_limit=30, **options)
    return asyncio.run(generate(chosen, llm_config=config))


def served(url: str) -> int:
    with urllib.request.urlopen(url.removesuffix("/v1") + "/admin/stats", timeout=5) as response:
        return json.loads(response.read())["requests"]


def submit(
    client, ls_task_id: int, decision: str, reasons=(), note: str = "", fixes: dict | None = None, adjudicating: bool = False
) -> int:
    """The annotation the formalization interface submits (choices by alias, every correction box)."""
    task = client.tasks.get(ls_task_id)
    result = [{"from_name": "decision", "to_name": "danger", "type": "choices", "value": {"choices": [decision]}}]
    if adjudicating:
        result.append({"from_name": "adjudication", "to_name": "danger", "type": "choices", "value": {"choices": ["adjudicating"]}})
    if reasons:
        result.append({"from_name": "reasons", "to_name": "danger", "type": "choices", "value": {"choices": list(reasons)}})
    if note:
        result.append({"from_name": "note", "to_name": "danger", "type": "textarea", "value": {"text": [note]}})
    for name in CORRECTABLE_FIELDS:
        text = (fixes or {}).get(name, task.data[f"current_{name}"])
        result.append({"from_name": f"fix_{name}", "to_name": "task", "type": "textarea", "value": {"text": [text]}})
    return client.annotations.create(ls_task_id, result=result, lead_time=30.0).id


def test_formalizations_wait_for_review_and_only_accepted_ones_are_generated(tmp_path, config, admin, annotator):
    name = f"formal-{uuid.uuid4().hex[:8]}"
    with replay() as url:
        first = run(tmp_path, name, url, review_formalizations=True)
        assert first.states == {AWAITING: 2, "no_danger": 1}
        assert served(url) == 3  # the extractions only: no code generation yet
        assert any("waiting for the formalization review: 2" in line for line in first.lines())
        store = RunStore(tmp_path / name)
        saved = json.loads((store.root / "work" / CHECKED / "formalization.json").read_text())
        assert saved["record_text"] and saved["extraction"]["result"]["status"] == "DANGER_EXTRACTED"
        assert read_spec(store.root)["spec"]["settings"]["review_formalizations"] is True
        overview = run_overview(store.root)
        assert overview.stage("formalization review").waiting == 2 and overview.states[AWAITING] == 2

        with pytest.raises(ReviewError, match="--formalizations"):
            pull_formalizations(store, config)  # nothing pushed yet
        pushed = push_formalizations(store, config)
        assert pushed.created_project and sorted(pushed.imported) == [REPAIRED, CHECKED] and not pushed.failed
        assert "imported 2 formalization(s)" in pushed.summary()
        project = admin.projects.get(pushed.project_id)
        assert project.title == formalization_project_title(store)
        tasks = {t.data["record_id"]: t for t in admin.tasks.list(project=pushed.project_id, fields="all")}
        assert sorted(tasks) == [REPAIRED, CHECKED] and all(not t.predictions for t in tasks.values())
        assert "Personal escort robot for a child" in tasks[CHECKED].data["task_html"]
        assert "The source record" in tasks[CHECKED].data["record_html"]
        assert push_formalizations(store, config).imported == []  # pushing again adds nothing
        assert [r.state for r in store.ledger.records(state=AWAITING)] == [AWAITING, AWAITING]  # the push moves no record

        ann = annotator(f"formal-{uuid.uuid4().hex[:6]}@example.org")
        links = ReviewMapping.load(store, FORMALIZATION_MAPPING_FILE).tasks
        submit(ann, links[CHECKED].ls_task_id, "accept", fixes={"robot_role": NEW_ROLE})
        submit(
            ann,
            links[REPAIRED].ls_task_id,
            "reject",
            reasons=("not_faithful_to_record", "not_practical_for_a_robot"),
            note="The report says nothing about a robot crossing the street.",
        )
        pulled = pull_formalizations(store, config)
        assert (pulled.accepted, pulled.rejected, pulled.pending, pulled.corrections) == ([CHECKED], [REPAIRED], [], 1)
        assert store.ledger.row(CHECKED).state == "extracted"
        rejected = store.ledger.row(REPAIRED)
        assert rejected.state == "rejected_by_formalization_review"
        assert "not faithful to the record, not practical for a robot" in rejected.reason
        assert "nothing about a robot crossing the street" in rejected.reason
        verdict = json.loads((store.root / "work" / REPAIRED / "formalization_review.json").read_text())
        assert verdict["decision"] == "rejected" and verdict["reasons"] == ["not_faithful_to_record", "not_practical_for_a_robot"]
        assert pull_formalizations(store, config).accepted == []  # a verdict is final: nothing moves again

        calls = served(url)
        resumed = run(tmp_path, name, url, review_formalizations=True)
        assert resumed.states == {"checked": 1, "rejected_by_formalization_review": 1, "no_danger": 1}
        assert served(url) == calls + 2  # the accepted record's generate and judge calls, nothing else
    metadata = json.loads((store.task_dir(CHECKED) / "metadata.json").read_text())
    assert metadata["danger_formalization"]["robot_role"] == NEW_ROLE  # generated from the corrected formalization
    review = metadata["provenance"]["formalization_review"]
    assert review["decision"] == "accepted" and review["corrections"][0]["field"] == "robot_role"
    assert review["corrections"][0]["new"] == NEW_ROLE and "@" not in json.dumps(review)  # no person named
    assert not store.task_dir(REPAIRED).exists()
    overview = run_overview(store.root)
    funnel = overview.stage("formalization review")
    assert (funnel.entered, funnel.passed, funnel.rejected, funnel.waiting) == (2, 1, 1, 0)
    assert overview.stage("checks").entered == 1
    rejections = overview.distribution.to_dict()["rejections"]
    assert rejections["formalization review"]["rejected"] == {"neiss": 1} and rejections["formalization review"]["rate"] == 0.5
    shown = format_overview(overview)
    assert "formalization review: 1 of 2 (50.0%)" in shown and "rejected_by_formalization_review reasons:" in shown
    assert "rejected_by_formalization_review" in overview.to_markdown()
    store.ledger.close()


def test_a_team_reviews_formalizations_with_an_adjudicator_agreement_and_disagreements(tmp_path, config, admin, annotator, capsys):
    name = f"formal-{uuid.uuid4().hex[:8]}"
    with replay() as url:
        run(tmp_path, name, url, review_formalizations=True)
    store = RunStore(tmp_path / name)
    alice, bob, lead = (f"{who}-{uuid.uuid4().hex[:6]}@example.org" for who in ("alice", "bob", "lead"))
    pushed = push_formalizations(store, config, annotators_per_task=2, adjudicators=[lead])
    views = [(v.data or {}).get("title") for v in admin.views.list(project=pushed.project_id)]
    assert views == ["Default", "Adjudication queue"]  # made by the push, as for checked tasks
    before = review_status(store, formalizations=True)
    assert (before.total.pending, before.total.not_pushed, before.adjudicators, before.agreement.tasks) == (2, 0, [lead], 0)

    links = {rid: link.ls_task_id for rid, link in ReviewMapping.load(store, FORMALIZATION_MAPPING_FILE).tasks.items()}
    first = submit(annotator(alice), links[CHECKED], "accept", fixes={"robot_role": NEW_ROLE})
    submit(annotator(bob), links[CHECKED], "reject", reasons=("not_practical_for_a_robot",))
    submit(annotator(alice), links[REPAIRED], "accept")
    submit(annotator(bob), links[REPAIRED], "accept")
    pulled = pull_formalizations(store, config)
    split = "votes split: 1 accept, 1 reject"
    assert (pulled.accepted, pulled.pending, pulled.queue) == ([REPAIRED], [CHECKED], {CHECKED: split})
    assert pulled.disagreements == {CHECKED: [f"{split} ({alice}, {bob})"]}
    assert (pulled.agreement.tasks, pulled.agreement.percent, pulled.agreement.krippendorff_alpha) == (2, 50.0, 0.0)
    data = admin.tasks.get(links[CHECKED]).data
    assert data["needs_adjudication"] == split and f'data-annotation-id="{first}"' in data["marks_html"]
    assert "sf-fix-robot_role" in data["marks_html"]  # alice's column marks the field she corrected
    queue_view = next(v for v in admin.views.list(project=pushed.project_id) if (v.data or {}).get("title") == "Adjudication queue")
    assert [t.id for t in admin.tasks.list(project=pushed.project_id, view=queue_view.id)] == [links[CHECKED]]
    status = review_status(store, formalizations=True)
    assert (status.total.pending, status.total.accepted, status.queue, status.disagreements) == (
        1,
        1,
        {CHECKED: split},
        pulled.disagreements,
    )
    assert status.agreement.to_dict() == pulled.agreement.to_dict()
    table = status.format_table()
    assert f"Formalization review of run {name}" in table and "Adjudication queue" in table and "Krippendorff's alpha 0.000" in table
    artifact = run_summary(store)  # the run's Prefect artifact
    assert "## Review\n" in artifact and "## Formalization review" in artifact and f"`{CHECKED}`: {split}" in artifact
    assert store.ledger.disagreements(open_only=True) == {}  # the review of checked tasks keeps its own
    assert list(store.ledger.disagreements(open_only=True, review="formalizations")) == [CHECKED]

    submit(annotator(lead), links[CHECKED], "reject", reasons=("not_practical_for_a_robot",), adjudicating=True)
    decided = pull_formalizations(store, config)
    assert (decided.rejected, decided.queue, decided.disagreements) == ([CHECKED], {}, {})
    assert decided.resolved == [f"{CHECKED}: {split}: adjudicated"] and decided.agreement.tasks == 2  # an adjudication is no vote
    assert admin.tasks.get(links[CHECKED]).data["needs_adjudication"] == ""
    [entry] = store.ledger.disagreements(review="formalizations")[CHECKED]
    assert (entry["resolution"], entry["resolved_by"]) == ("adjudicated", lead)
    assert main(["review", "status", str(store.root), "--formalizations", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert (shown["review"], shown["total"]["rejected"], shown["total"]["reasons"]) == (
        "formalizations",
        1,
        {"not_practical_for_a_robot": 1},
    )
    assert (shown["queue"], shown["disagreements"], shown["agreement"]["tasks"]) == ({}, {}, 2)
    card = review_report([store]).to_markdown(lambda name: f"reviewer-{name[:3]}")  # the release card's review section
    formal = card.split("### Formalization review (before code generation)", 1)[1]
    assert "2 task(s) with two or more votes: 50.0% pairwise agreement, Krippendorff's alpha 0.000" in formal
    assert "| reviewer-ali |" in formal and alice not in card
    assert "| votes split | 1 | 1 | 1 |" in formal  # found, resolved, by the adjudicator
    store.ledger.close()


def test_a_correction_that_breaks_the_formalization_keeps_the_record_waiting(tmp_path, config, annotator):
    name = f"formal-{uuid.uuid4().hex[:8]}"
    with replay() as url:
        run(tmp_path, name, url, review_formalizations=True)
    store = RunStore(tmp_path / name)
    push_formalizations(store, config)
    links = ReviewMapping.load(store, FORMALIZATION_MAPPING_FILE).tasks
    ann = annotator(f"formal-{uuid.uuid4().hex[:6]}@example.org")
    submit(ann, links[CHECKED].ls_task_id, "accept", fixes={"setting": "a very long place " * 6})  # DESPITE's settings: <= 60 chars
    pulled = pull_formalizations(store, config)
    assert pulled.accepted == [] and "setting" in pulled.failed[CHECKED] and "60 characters" in pulled.failed[CHECKED]
    assert store.ledger.row(CHECKED).state == AWAITING
    store.ledger.close()


def test_without_the_setting_records_go_straight_to_code_generation(tmp_path, monkeypatch):
    with replay() as url:
        summary = run(tmp_path, "plain", url)
    assert summary.states == {"checked": 2, "no_danger": 1}
    spec = read_spec(tmp_path / "plain")["spec"]
    assert "review_formalizations" not in spec["settings"]  # runs made before the setting resume unchanged
    overview = run_overview(tmp_path / "plain")
    assert [s.stage for s in overview.stages] == ["extract", "checks", "review"]
    assert "formalization review" not in overview.distribution.to_dict()["rejections"]
    plain = RunStore(tmp_path / "plain")
    assert "Formalization review" not in run_summary(plain)  # the run's artifact: no empty section
    plain.ledger.close()
    with pytest.raises(SpecChanged, match="settings.review_formalizations: null -> true"):
        run(tmp_path, "plain", "http://127.0.0.1:9/v1", review_formalizations=True)  # refused before any call

    monkeypatch.setenv("SAFEFORGE_REVIEW_FORMALIZATIONS", "1")
    assert GenerationSettings().review_formalizations is True
    parse = build_parser(["generate"]).parse_args
    assert parse(["generate", "neiss"]).review_formalizations is None  # the setting decides
    assert parse(["generate", "neiss", "--no-review-formalizations"]).review_formalizations is False
    assert parse(["generate", "neiss", "--review-formalizations"]).review_formalizations is True


def test_the_formalization_project_is_the_runs_own(tmp_path, config, admin):
    name = f"formal-{uuid.uuid4().hex[:8]}"
    with replay() as url:
        run(tmp_path, name, url, review_formalizations=True)
    store = RunStore(tmp_path / name)
    pushed = push_formalizations(store, config, annotators_per_task=2)
    assert admin.projects.get(pushed.project_id).maximum_annotations == 2
    (store.root / FORMALIZATION_MAPPING_FILE).unlink()  # found again by its title
    assert push_formalizations(store, config).project_id == pushed.project_id
    admin.projects.delete(pushed.project_id)
    with pytest.raises(ReviewError, match="--formalizations --reimport-missing"):
        push_formalizations(store, config)
    again = push_formalizations(store, config, reimport_missing=True)
    assert again.created_project and sorted(again.imported) == [REPAIRED, CHECKED]
    store.ledger.close()


def test_the_review_commands_take_formalizations(tmp_path, config, admin, annotator, monkeypatch, capsys):
    name = f"formal-{uuid.uuid4().hex[:8]}"
    with replay() as url:
        run(tmp_path, name, url, review_formalizations=True)
    monkeypatch.setenv("LABEL_STUDIO_URL", config.url)
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", config.api_key)
    folder = str(tmp_path / name)
    assert main(["review", "push", folder, "--formalizations"]) == 0
    out = capsys.readouterr().out
    assert f"('Formalization review: {name}')" in out and "imported 2 formalization(s); 0 already there" in out
    store = RunStore(tmp_path / name)
    links = ReviewMapping.load(store, FORMALIZATION_MAPPING_FILE).tasks
    submit(annotator(f"formal-{uuid.uuid4().hex[:6]}@example.org"), links[REPAIRED].ls_task_id, "reject", reasons=("other",))
    assert main(["review", "pull", folder, "--formalizations", "--json"]) == 0
    pulled = json.loads(capsys.readouterr().out)
    assert (pulled["rejected"], pulled["pending"], pulled["progress"]) == ([REPAIRED], [CHECKED], {CHECKED: "0 of 1"})
    assert store.ledger.row(REPAIRED).state == "rejected_by_formalization_review"

    project = ReviewMapping.load(store, FORMALIZATION_MAPPING_FILE).project_id
    shown = admin.tasks.get(links[CHECKED].ls_task_id).data
    [copy] = admin.projects.import_tasks(project, request=[{"data": shown}], return_task_ids=True).task_ids  # imported twice
    submit(annotator(f"formal-{uuid.uuid4().hex[:6]}@example.org"), copy, "accept")
    assert main(["review", "pull", folder, "--formalizations"]) == 0
    out = capsys.readouterr().out
    assert "accepted 1" in out and f"`safeforge review push {name} --formalizations --remove-duplicates` merges them" in out
    assert store.ledger.row(CHECKED).state == "extracted"  # the vote on the copy counts
    assert main(["review", "status", folder, "--formalizations"]) == 0
    assert f"duplicate: {CHECKED} has 1 extra copy(ies)" in capsys.readouterr().out
    assert main(["review", "push", folder, "--formalizations", "--remove-duplicates", "--json"]) == 0
    merged = json.loads(capsys.readouterr().out)
    assert (merged["duplicates_removed"], merged["annotations_moved"]) == (1, 1)
    assert sorted(t.id for t in admin.tasks.list(project=project)) == sorted(link.ls_task_id for link in links.values())
    store.ledger.close()


def test_a_record_retried_after_an_error_keeps_the_formalization_the_review_accepted(tmp_path):
    with replay() as url:
        run(tmp_path, "retried", url, review_formalizations=True)
        store = RunStore(tmp_path / "retried")
        waiting = {w.record_id: w for w in waiting_formalizations(store)[0]}
        detail = {"decision": "accepted", "annotations": [{"annotator": "ann@example.org"}], "corrections": []}
        verdict = FormalizationVerdict(True, "formalization review: accepted by ann@example.org", {"robot_role": NEW_ROLE}, detail)
        assert record_formalization_verdict(store, waiting[CHECKED], verdict) == "extracted"
        store.ledger.transition(CHECKED, "error", "simulated: the generate call failed")
        store.ledger.close()
        calls = served(url)
        again = run(tmp_path, "retried", url, review_formalizations=True, retry_errors=True)
        assert again.states == {"checked": 1, AWAITING: 1, "no_danger": 1}
        assert served(url) == calls + 2  # generate and judge: no new extraction, no new review
    metadata = json.loads((tmp_path / "retried" / "tasks" / CHECKED / "metadata.json").read_text())
    assert metadata["danger_formalization"]["robot_role"] == NEW_ROLE
    assert metadata["provenance"]["formalization_review"] == {"decision": "accepted", "corrections": []}
