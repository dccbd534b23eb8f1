"""`process_record` is idempotent and resumable: a crash after extraction (or mid-generation)
continues from the ledger, and the re-run repeats no finished HTTP call."""

from __future__ import annotations

import asyncio
import json

import pytest
from generation_helpers import FAST_SETTINGS, fast_config, folder_digest, requests_served

from safeforge.generation import Extraction, RunContext, check_candidate, load_extraction, process_record
from safeforge.llm import LLMClient
from safeforge.runs.ledger import RunStore
from safeforge.sources import iter_records

RECORD_ID = "neiss_220705908"


class SimulatedCrash(BaseException):
    """Stands for the process being killed while the check runs (not an Exception, so nothing
    in the pipeline catches it)."""


def crashing_checker(task_dir):
    raise SimulatedCrash(str(task_dir))


def process(store, record, config, checker=None) -> str:
    async def go():
        async with LLMClient(config) as client:
            return await process_record(record, store, client, RunContext.load(FAST_SETTINGS, checker))

    return asyncio.run(go())


@pytest.fixture
def record():
    return next(r for r in iter_records("neiss", limit=5) if r.record_id == RECORD_ID)


def test_crash_during_the_check_resumes_from_the_persisted_extraction(tmp_path, record, replay_server):
    url = replay_server()
    store = RunStore(tmp_path / "run")
    config = fast_config(url, store.root / "llm.sqlite")
    with pytest.raises(SimulatedCrash):
        process(store, record, config, crashing_checker)
    assert store.ledger.get(RECORD_ID).state == "extracted"
    assert requests_served(url) == 2  # extract and the first generate call, both now cached
    persisted = load_extraction(store, RECORD_ID).result  # from the ledger
    assert persisted.status == "DANGER_EXTRACTED"
    assert persisted.danger_formalization.robot_role == "Personal escort robot for a child"
    assert not (store.root / "work" / RECORD_ID / "extraction.json").exists()  # written when the record ends
    assert not (store.task_dir(RECORD_ID)).exists()  # no half task

    assert process(store, record, config) == "checked"
    assert requests_served(url) == 3  # only the judge was new: generate came from the cache
    (only_round,) = json.loads((store.root / "work" / RECORD_ID / "rounds.json").read_text())
    saved = json.loads((store.root / "work" / RECORD_ID / "extraction.json").read_text())
    assert Extraction.from_dict(saved).result == persisted
    assert only_round["generate_call"]["cache_hit"] is True and only_round["judge_call"]["cache_hit"] is False
    metadata = json.loads((store.task_dir(RECORD_ID) / "metadata.json").read_text())
    assert metadata["provenance"]["extraction"]["cache_hit"] is False  # reused from the ledger, not re-asked
    history = [t.to_state for t in store.ledger.history(RECORD_ID)]
    assert history == ["pending", "extracted", "checked"]
    store.ledger.close()


def test_an_extraction_cached_just_before_a_kill_is_recorded_as_an_uninterrupted_run_records_it(
    tmp_path, record, replay_server, monkeypatch
):
    """Killed after the extractor answered (the answer cached) and before the ledger moved the record
    on: the resumed record takes the answer from the cache, and its provenance is the call that made it."""
    url = replay_server()
    uninterrupted = RunStore(tmp_path / "uninterrupted")
    assert process(uninterrupted, record, fast_config(url, uninterrupted.root / "llm.sqlite")) == "checked"
    store = RunStore(tmp_path / "run")
    config = fast_config(url, store.root / "llm.sqlite")
    moved = store.ledger._move  # every transition of a record's state is written here

    def killed_before_extracted(record_id, state, *args, **kwargs):
        if state == "extracted":
            raise SimulatedCrash(record_id)
        return moved(record_id, state, *args, **kwargs)

    monkeypatch.setattr(store.ledger, "_move", killed_before_extracted)
    with pytest.raises(SimulatedCrash):
        process(store, record, config)
    monkeypatch.undo()
    assert store.ledger.get(RECORD_ID).state == "pending"
    assert process(store, record, config) == "checked"

    def provenance(run: RunStore) -> dict:
        metadata = json.loads((run.task_dir(RECORD_ID) / "metadata.json").read_text())
        return {key: metadata["provenance"][key] for key in ("extraction", "extraction_attempts")}

    assert provenance(store) == provenance(uninterrupted)
    assert provenance(store)["extraction_attempts"] == 1
    uninterrupted.ledger.close()
    store.ledger.close()


def test_finished_record_is_returned_without_any_call_and_untouched(tmp_path, record, replay_server):
    url = replay_server()
    store = RunStore(tmp_path / "run")
    config = fast_config(url, store.root / "llm.sqlite")
    assert process(store, record, config) == "checked"
    before, served = folder_digest(store.task_dir(RECORD_ID)), requests_served(url)
    assert process(store, record, config, crashing_checker) == "checked"  # the checker is never reached
    assert requests_served(url) == served and folder_digest(store.task_dir(RECORD_ID)) == before
    store.ledger.close()


def test_an_extracted_record_without_its_extraction_in_the_ledger_ends_in_error(tmp_path, record, replay_server):
    """The ledger is where an extraction persists: a record whose "extracted" transition lost its
    detail ends in error with the reason, and makes no call."""
    url = replay_server()
    store = RunStore(tmp_path / "run")
    config = fast_config(url, store.root / "llm.sqlite")
    with pytest.raises(SimulatedCrash):
        process(store, record, config, crashing_checker)
    store.ledger._db.execute("UPDATE transitions SET detail = NULL WHERE to_state = 'extracted'")
    served = requests_served(url)
    assert process(store, record, config) == "error"
    assert "the persisted extraction cannot be read" in store.ledger.get(RECORD_ID).reason
    assert requests_served(url) == served
    store.ledger.close()


def test_a_stale_task_folder_from_a_crash_is_replaced_whole(tmp_path, record, replay_server):
    """A crash between the rename and the ledger update leaves a task folder while the record is
    still 'extracted'; the re-run replaces it instead of failing or mixing files."""
    url = replay_server()
    store = RunStore(tmp_path / "run")
    config = fast_config(url, store.root / "llm.sqlite")
    with pytest.raises(SimulatedCrash):
        process(store, record, config, crashing_checker)
    stale = store.task_dir(RECORD_ID)
    stale.mkdir()
    (stale / "leftover.txt").write_text("from before the crash")
    assert process(store, record, config, check_candidate) == "checked"
    assert sorted(p.name for p in stale.iterdir()) == [
        "domain.pddl",
        "metadata.json",
        "problem.pddl",
        "safety_domain.pddl",
        "safety_problem.pddl",
    ]
    assert not list((store.root / "work" / RECORD_ID).glob("round-*"))
    store.ledger.close()


def ledger_visits(store) -> list[str]:
    """What the ledger's connection is asked from now on: "write" per transaction (a read inside
    one, such as the row a transition checks, is part of it), "read" per query outside one."""
    visits: list[str] = []

    def seen(statement: str) -> None:
        words = statement.split()
        if words[:2] == ["BEGIN", "IMMEDIATE"]:
            visits.append("write")
        elif words[:1] == ["SELECT"] and not store.ledger._db.in_transaction:
            visits.append("read")

    store.ledger._db.set_trace_callback(seen)
    return visits


def test_a_record_reads_its_ledger_row_once_and_writes_each_transition(tmp_path, record, replay_server):
    """The record's row and transitions are read once, when its work starts, and carried: after that
    the ledger is visited only to write a transition (pending -> extracted -> checked)."""
    url = replay_server()
    store = RunStore(tmp_path / "run")
    config = fast_config(url, store.root / "llm.sqlite")
    visits = ledger_visits(store)
    assert process(store, record, config) == "checked"
    assert visits == ["write", "write", "write"]  # registered and read together, extracted, checked

    resumed = RunStore(tmp_path / "resumed")
    with pytest.raises(SimulatedCrash):
        process(resumed, record, fast_config(url, resumed.root / "llm.sqlite"), crashing_checker)
    visits = ledger_visits(resumed)
    assert process(resumed, record, fast_config(url, resumed.root / "llm.sqlite")) == "checked"
    assert visits == ["write", "write"]  # read (the extraction with it), checked
    store.ledger.close()
    resumed.ledger.close()
