"""`run_generation` on the first two records of every other source's bundled sample, against the
replay server's hand-written responses: each record ends in its scripted state, and each checked
task folder is a valid, checked task."""

from __future__ import annotations

import pytest
from generation_helpers import FAST_SETTINGS, fast_config, requests_served

from safeforge.generation import GenerateOptions, run_generation
from safeforge.task.checks import check_task
from safeforge.task.folder import Task

EXPECTED = {
    "normbank": {"normbank_0": "checked", "normbank_1": "checked"},
    "bddl": {"bddl_adding_chemicals_to_hot_tub": "checked", "bddl_adding_chemicals_to_pool": "checked"},
    "virtualhome": {
        "virtualhome_results_intentions_march-13-18__file1002_1": "no_danger",
        "virtualhome_results_intentions_march-13-18__file115_2": "checked",
    },
    "alfred": {"alfred_trial_T20190908_233127_359423": "checked", "alfred_trial_T20190906_201143_149707": "checked"},
}


@pytest.mark.parametrize("source", sorted(EXPECTED))
def test_scripted_records_of_each_source(source, tmp_path, replay_server):
    url = replay_server()
    summary = run_generation(
        GenerateOptions(source=source, out=tmp_path, run_name="demo", limit=2, concurrency=2),
        settings=FAST_SETTINGS,
        llm_config=fast_config(url, tmp_path / "llm.sqlite"),
    )
    expected = EXPECTED[source]
    checked = sorted(rid for rid, state in expected.items() if state == "checked")
    assert summary.records == 2 and summary.errors == {}
    assert summary.tasks_passed == len(checked)
    assert sorted((tmp_path / "demo" / "tasks").iterdir()) == [tmp_path / "demo" / "tasks" / rid for rid in checked]
    # one extract call per record, plus generate and judge for each checked one (all pass in round 1)
    assert summary.calls == requests_served(url) == 2 + 2 * len(checked)
    for record_id in checked:
        task = Task.load(tmp_path / "demo" / "tasks" / record_id)
        assert task.metadata.provenance.source == source
        assert task.metadata.provenance.attempts == 1
        assert task.metadata.quality_judge.model_dump() == {"approved": True, "issues": []}
        safe, unsafe = (getattr(task.metadata.reference_feasible_plans, k) for k in ("safe", "unsafe"))
        assert task.validator.check(safe).score == 2 and task.validator.check(unsafe).score == 1
    # each folder passes the checks of a generated task as it stands (without rewriting anything), and
    # without a warning of DESPITE's rules when checked as any task
    for record_id in checked:
        assert check_task(Task.load(tmp_path / "demo" / "tasks" / record_id), generated=True).ok
        assert check_task(Task.load(tmp_path / "demo" / "tasks" / record_id)).warnings == []


def test_judge_can_be_disabled(tmp_path, replay_server):
    url = replay_server()
    options = GenerateOptions(out=tmp_path, run_name="nj", limit=1, offset=2, judge=False)
    summary = run_generation(options, settings=FAST_SETTINGS, llm_config=fast_config(url, tmp_path / "llm.sqlite"))
    assert summary.states == {"checked": 1} and summary.calls == 2  # extract and generate, no judge
    metadata = Task.load(tmp_path / "nj" / "tasks" / "neiss_220705908").metadata
    assert metadata.quality_judge is None
    assert metadata.provenance.models["judge"] is None
    assert metadata.provenance.rounds[0]["judge"] is None


def test_a_run_reads_the_settings_once_and_its_prompts_once(tmp_path, replay_server, monkeypatch):
    """Not once per record or per stage: the run's context holds them (safeforge.sources reads where a
    source's data lives on its own)."""
    import sys
    from collections import Counter

    from safeforge.llm.prompts import PromptTemplate
    from safeforge.settings import Settings

    url = replay_server()
    loads: Counter[str] = Counter()
    read_settings, read_template = Settings.load_with_sources.__func__, PromptTemplate.load.__func__

    def settings_read(cls, *args, **kwargs):
        if not sys._getframe(2).f_globals["__name__"].startswith("safeforge.sources"):
            loads["settings"] += 1
        return read_settings(cls, *args, **kwargs)

    def template_read(cls, *args, **kwargs):
        loads["templates"] += 1
        return read_template(cls, *args, **kwargs)

    monkeypatch.setattr(Settings, "load_with_sources", classmethod(settings_read))
    monkeypatch.setattr(PromptTemplate, "load", classmethod(template_read))
    summary = run_generation(GenerateOptions(out=tmp_path, run_name="once", limit=3), llm_config=fast_config(url, tmp_path / "llm.sqlite"))
    assert summary.states == {"no_danger": 1, "checked": 2}
    assert loads == {"settings": 1, "templates": 4}  # one PromptSet (four templates) for the run
