"""Run summaries: counts per state, source and stage, acceptance, cost; `safeforge runs`."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest
from tests_paths import EXAMPLES

from safeforge.cli.main import main
from safeforge.llm import CallLedger, LedgerRow
from safeforge.runs import distribution, overview
from safeforge.runs.ledger import RunLedger, RunStore
from safeforge.runs.overview import RunNotFound, list_runs, run_overview
from safeforge.task.files import read_metadata


def _run(root, paths: dict[str, list[str]], source_of=lambda rid: rid.split("_")[0]):
    """A run whose record `rid` walks through `paths[rid]` (states after pending)."""
    store = RunStore(root)
    store.ledger.register((rid, source_of(rid), f"file:row {i}") for i, rid in enumerate(paths))
    for rid, states in paths.items():
        for state in states:
            store.ledger.transition(rid, state, reason=f"{state} because")
    return store


PATHS = {
    "neiss_1": ["no_danger"],
    "neiss_2": ["extracted", "rejected_by_checks"],
    "neiss_3": ["extracted", "checked", "in_review", "accepted"],
    "neiss_4": ["extracted", "checked", "in_review", "rejected_by_review"],
    "neiss_5": ["error"],
    "bddl_1": ["extracted", "error"],
    "bddl_2": ["extracted", "checked"],
    "bddl_3": [],
    "bddl_4": ["extracted", "checked", "error"],
}


def test_overview_counts_states_sources_and_stage_funnels(tmp_path):
    _run(tmp_path / "r1", PATHS)
    o = run_overview(tmp_path / "r1")
    assert o.records == 9
    assert o.states == {
        "pending": 1,
        "checked": 1,
        "no_danger": 1,
        "rejected_by_checks": 1,
        "rejected_by_review": 1,
        "accepted": 1,
        "error": 3,
    }
    assert o.by_source["bddl"] == {"pending": 1, "checked": 1, "error": 2}
    extract, checks, review = o.stages
    # extract: 9 in; passed = 7 past extraction (incl. errors after it); no_danger 1; error in extract 1; 1 pending
    assert (extract.entered, extract.passed, extract.rejected, extract.errors, extract.waiting) == (9, 6, 1, 1, 1)
    assert (checks.entered, checks.passed, checks.rejected, checks.errors, checks.waiting) == (6, 4, 1, 1, 0)
    assert (review.entered, review.passed, review.rejected, review.errors, review.waiting) == (4, 1, 1, 1, 1)
    assert extract.rate == pytest.approx(6 / 8) and checks.rate == pytest.approx(4 / 6)
    assert review.rate == pytest.approx(1 / 3)
    assert o.acceptance_rate == pytest.approx(1 / 9)
    assert o.checked == 4
    bddl_checks = o.stages_by_source["bddl"][1]
    assert (bddl_checks.entered, bddl_checks.passed, bddl_checks.errors) == (3, 2, 1)
    assert o.reasons["error"] == [("error because", 3)]
    assert o.cost.calls == 0 and o.cost_per_accepted_usd == 0.0


def test_cost_comes_from_the_call_ledger_per_accepted_and_checked_task(tmp_path):
    store = _run(tmp_path / "r", PATHS)
    ledger = CallLedger(store.llm_db)
    ledger.record(LedgerRow("extract", "neiss_1", "gpt-4o-mini", 1, "ok", 100, 20, 0, 0.1, cost_usd=0.25))
    ledger.record(LedgerRow("generate", "neiss_3", "gpt-4o-mini", 1, "retry_rate_limit", 0, 0, 0, 0.1, cost_usd=None))
    ledger.record(LedgerRow("generate", "neiss_3", "gpt-4o-mini", 2, "ok", 300, 200, 64, 0.1, cost_usd=0.75))
    ledger.record(LedgerRow("generate", "neiss_3", "gpt-4o-mini", 0, "cache_hit", cost_usd=0.0))
    ledger.close()
    o = run_overview(store.root)
    assert (o.cost.calls, o.cost.cache_hits, o.cost.tokens_in, o.cost.tokens_out) == (3, 1, 400, 220)
    assert o.cost.cost_usd == pytest.approx(1.0)
    assert o.cost_per_accepted_usd == pytest.approx(1.0) and o.cost_per_checked_usd == pytest.approx(0.25)
    assert o.cost.by_stage["generate"]["calls"] == 2 and o.cost.unpriced_calls == 1
    md = o.to_markdown()
    assert ("| source | pending | checked | no_danger | rejected_by_checks | rejected_by_review | accepted | error | total |") in md
    assert "| **all** | 1 | 1 | 1 | 1 | 1 | 1 | 3 | 9 |" in md
    assert "| checks | 6 | 4 | 1 | 1 | 0 | 66.7% |" in md
    assert "Per accepted task: $1.000000; per checked task: $0.250000." in md


def test_not_a_run_is_refused(tmp_path):
    with pytest.raises(RunNotFound, match="no ledger.sqlite"):
        run_overview(tmp_path)
    assert list_runs(tmp_path / "missing") == []


def test_runs_cli_list_and_show(tmp_path, capsys):
    _run(tmp_path / "first", {"neiss_1": ["no_danger"]})
    _run(tmp_path / "second", PATHS)
    assert [p.name for p in list_runs(tmp_path)] == ["second", "first"]
    (tmp_path / "not-a-run").mkdir()
    assert main(["runs", "list", "--outputs", str(tmp_path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1].split()[:6] == ["second", "9", "1", "4", "1", "3"]
    assert out[2].split()[:2] == ["first", "1"] and len(out) == 3

    assert main(["runs", "show", "second", "--outputs", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    assert "accepted: 1 (11.1%)" in text and "passed checks: 4" in text
    assert "checks           6       4        1       1       0   66.7%" in text
    assert "bddl: extract 3/4 (100.0%)" in text

    assert main(["runs", "show", str(tmp_path / "second"), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["states"]["accepted"] == 1 and data["stages"][2]["rate"] == pytest.approx(1 / 3)
    assert data["distribution"]["tasks"] == 0 and data["llm_endpoints"] == []

    # the list is made from the ledgers alone: no task folder is read (seconds for a run of thousands)
    assert main(["runs", "list", "--outputs", str(tmp_path), "--json"]) == 0
    listed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(r["name"], r["records"], r["distribution"], r["llm_endpoints"]) for r in listed] == [
        ("second", 9, None, None),
        ("first", 1, None, None),
    ]

    assert main(["runs", "show", "nope", "--outputs", str(tmp_path)]) == 2
    assert "not a run" in capsys.readouterr().err


def test_runs_show_escapes_what_reasons_quote(tmp_path, capsys):
    """A reason can quote a model's reply or a record: `runs show` prints its escape sequences
    and reordering characters as escapes, never sends them to the terminal; JSON keeps the text."""
    store = _run(tmp_path / "run", {"neiss_1": ["extracted"]})
    store.ledger.transition("neiss_1", "error", reason="unexpected failure: \x1b]0;owned\x07 \x1b[2J name\u202egnp.exe")
    assert main(["runs", "show", "run", "--outputs", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    assert "unexpected failure: \\x1b]0;owned\\x07 \\x1b[2J name\\u202egnp.exe" in text
    assert not {"\x1b", "\x07", "\u202e"} & set(text)
    assert main(["runs", "show", "run", "--outputs", str(tmp_path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["reasons"]["error"][0][0].endswith("name\u202egnp.exe")


def test_the_overview_reads_each_task_once_and_opens_the_ledger_once(tmp_path, monkeypatch):
    """`runs show`: the endpoints and the distribution come from one read of each task's metadata,
    the counts and the rejections from one opening of the ledger."""
    store = _run(tmp_path / "r", {"neiss_3": ["extracted", "checked"], "neiss_4": ["extracted", "rejected_by_checks"]})
    store.ledger.close()
    shutil.copytree(EXAMPLES / "bathroom_bleach_bucket", store.task_dir("neiss_3"))
    shutil.copytree(EXAMPLES / "care_home_bad_news", store.root / "rejected" / "neiss_4")
    reads: Counter[str] = Counter()
    opened: list[Path] = []

    def counted_read(folder, *args, **kwargs):
        reads[Path(folder).name] += 1
        return read_metadata(folder, *args, **kwargs)

    def counted_open(ledger, path):
        opened.append(Path(path))
        real_open(ledger, path)

    real_open = RunLedger.__init__
    for module in (overview, distribution):
        monkeypatch.setattr(module, "read_metadata", counted_read, raising=False)
    monkeypatch.setattr(RunLedger, "__init__", counted_open)
    found = run_overview(store.root)
    assert reads == {"neiss_3": 1, "neiss_4": 1}
    assert opened == [store.root / "ledger.sqlite"]
    assert found.distribution is not None and found.distribution.tasks == 1
