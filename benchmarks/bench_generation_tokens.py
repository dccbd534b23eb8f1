"""Tokens and dollars per accepted task on the replay suite (not a test; deterministic).

Runs `generate` on every source's scripted records (the bundled samples and the hand-written replay
responses) against the replay server, then reads the runs' call ledgers: prompt and completion
tokens per stage, per accepted task, and the prompt tokens of each generator round of the record
that goes through every round (`neiss_160538697`, rejected after the last). Replay usage is
emulated (characters / 4); prices are deepseek-chat's. Token counts are the same on every run of
the same code, so two versions compare directly.

    .venv/bin/python benchmarks/bench_generation_tokens.py
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from safeforge.generation import GenerateOptions, run_generation  # noqa: E402
from safeforge.llm import CallLedger, LLMConfig  # noqa: E402
from safeforge.llm.replay_server import running_replay_server  # noqa: E402
from safeforge.settings import Settings  # noqa: E402

SUITE = {"neiss": 5, "normbank": 2, "bddl": 2, "virtualhome": 2, "alfred": 2}  # scripted records per source
LONG_RECORD = "neiss_160538697"


def main() -> None:
    responses = Settings().replay_responses_dir
    with tempfile.TemporaryDirectory() as tmp, running_replay_server(responses, latency_ms=0) as url:
        os.environ["SAFEFORGE_OUTPUTS"] = tmp
        totals, accepted, rounds = Counter(), 0, []
        for source, limit in SUITE.items():
            config = LLMConfig(
                base_url=url, model="deepseek-chat", db_path=Path(tmp) / f"{source}.sqlite", backoff_base_s=0.0, max_attempts=2
            )
            summary = run_generation(GenerateOptions(source=source, limit=limit, run_name=source), llm_config=config)
            accepted += summary.tasks_passed
            ledger = CallLedger(config.db_path)
            for row in ledger.rows():
                if row.outcome == "cache_hit":
                    continue
                totals[f"{row.stage} in"] += row.tokens_in
                totals[f"{row.stage} out"] += row.tokens_out
                totals["in"] += row.tokens_in
                totals["out"] += row.tokens_out
                totals["usd"] += row.cost_usd or 0.0
                if row.record_id == LONG_RECORD and row.stage == "generate":
                    rounds.append(row.tokens_in)
    print(f"accepted tasks: {accepted}")
    print(f"tokens in {totals['in']}, out {totals['out']}, ${totals['usd']:.4f}")
    print(
        f"per accepted task: {totals['in'] / accepted:.0f} tokens in, {totals['out'] / accepted:.0f} out, ${totals['usd'] / accepted:.5f}"
    )
    for stage in ("extract", "generate", "judge"):
        print(f"  {stage:<9} in {totals[f'{stage} in']:>7}  out {totals[f'{stage} out']:>6}")
    print(f"{LONG_RECORD}: prompt tokens per generator round: {rounds}")


if __name__ == "__main__":
    main()
