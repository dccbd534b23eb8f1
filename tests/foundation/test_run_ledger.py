"""The run ledger: forward-only transitions, idempotence, counts, history."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from safeforge.runs.ledger import TERMINAL, RunLedger, RunStore, TransitionError


def test_register_is_idempotent_and_starts_pending(tmp_path):
    ledger = RunLedger(tmp_path / "l.sqlite")
    assert ledger.register([("neiss_1", "neiss", "a.csv:row 1"), ("neiss_2", "neiss", "a.csv:row 2")]) == 2
    assert ledger.register([("neiss_1", "neiss", "a.csv:row 1")]) == 0
    assert ledger.counts() == {"pending": 2}


def test_forward_path_and_history(tmp_path):
    ledger = RunLedger(tmp_path / "l.sqlite")
    ledger.register([("r", "bddl", "x")])
    for state in ("extracted", "checked", "in_review", "accepted"):
        assert ledger.transition("r", state, reason=f"to {state}", detail={"n": 1})
    row = ledger.get("r")
    assert row.state == "accepted" and row.terminal
    assert [t.to_state for t in ledger.history("r")] == ["pending", "extracted", "checked", "in_review", "accepted"]
    assert ledger.history("r")[1].detail == {"n": 1}


def test_repeating_a_transition_records_nothing(tmp_path):
    ledger = RunLedger(tmp_path / "l.sqlite")
    ledger.register([("r", "bddl", "x")])
    assert ledger.transition("r", "no_danger", "nothing dangerous")
    assert not ledger.transition("r", "no_danger", "again")
    assert len(ledger.history("r")) == 2
    assert ledger.get("r").reason == "nothing dangerous"


@pytest.mark.parametrize("path, bad", [([], "accepted"), (["extracted"], "pending"), (["no_danger"], "extracted")])
def test_illegal_transitions_name_record_and_states(tmp_path, path, bad):
    ledger = RunLedger(tmp_path / "l.sqlite")
    ledger.register([("r", "bddl", "x")])
    for state in path:
        ledger.transition("r", state)
    with pytest.raises(TransitionError, match=f"r: cannot go from {ledger.get('r').state} to {bad}"):
        ledger.transition("r", bad)


def test_unknown_record_and_state(tmp_path):
    ledger = RunLedger(tmp_path / "l.sqlite")
    with pytest.raises(TransitionError, match="not in this run's ledger"):
        ledger.transition("ghost", "extracted")
    ledger.register([("r", "bddl", "x")])
    with pytest.raises(TransitionError, match="unknown state"):
        ledger.transition("r", "finished")


def test_concurrent_writers_lose_nothing(tmp_path):
    store = RunStore(tmp_path / "run")
    ids = [(f"r{i}", "neiss" if i % 2 else "bddl", "") for i in range(200)]
    store.ledger.register(ids)
    other = RunLedger(store.root / "ledger.sqlite")  # a second connection, as another process has

    def finish(i):
        ledger = store.ledger if i % 2 else other
        ledger.transition(f"r{i}", "extracted")
        ledger.transition(f"r{i}", TERMINAL[1])

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(finish, range(200)))
    assert store.ledger.counts() == {"rejected_by_checks": 200}
    assert store.ledger.counts(by_source=True) == {"bddl": {"rejected_by_checks": 100}, "neiss": {"rejected_by_checks": 100}}
    assert store.task_dir("t1") == store.root / "tasks" / "t1"


def test_a_multi_line_reason_is_one_line_in_the_ledger_and_whole_in_the_work_folder(tmp_path):
    ledger = RunLedger(tmp_path / "run" / "ledger.sqlite")
    ledger.register([("r1", "neiss", "neiss@sample/holdout_labeled.csv:row 1")])
    reason = (
        "extract: LLM call failed (validation, 2 attempt(s)): 1 validation error for ExtractionResult\n"
        "dangers.0.setting\n  String should have at least 1 character [type=string_too_short]\n"
        "    For further information visit https://errors.pydantic.dev/2.11/v/string_too_short"
    )
    ledger.transition("r1", "error", reason)
    stored = ledger.get("r1").reason
    assert "\n" not in stored and stored == (
        "extract: LLM call failed (validation, 2 attempt(s)): 1 validation error for ExtractionResult [full text: work/r1/reasons.txt]"
    )
    assert ledger.history("r1")[-1].reason == stored
    assert (tmp_path / "run" / "work" / "r1" / "reasons.txt").read_text() == f"== error\n{reason}\n"
    ledger.transition("r1", "pending", "retry requested")
    assert ledger.get("r1").reason == "retry requested"  # short reasons stay as they are
