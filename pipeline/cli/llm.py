"""`safeforge llm ...`: the replay server, the call ledger summary, cache-miss explanations."""

from __future__ import annotations

import argparse
from pathlib import Path

from safeforge.llm import CallLedger, LLMConfig, replay_server


def register(subparsers: argparse._SubParsersAction) -> None:
    llm = subparsers.add_parser("llm", help="LLM access: replay server, call ledger, cache misses")
    commands = llm.add_subparsers(dest="llm_command", metavar="COMMAND", required=True)

    serve = commands.add_parser("replay-server", help="serve hand-written responses over an OpenAI-compatible API")
    replay_server.add_arguments(serve)
    serve.set_defaults(func=replay_server.run_from_args)

    calls = commands.add_parser("calls", help="calls, tokens and dollars by stage, from the ledger")
    _add_db_argument(calls)
    calls.set_defaults(func=show_calls)

    why = commands.add_parser("why-miss", help="why the calls of one record missed the cache")
    _add_db_argument(why)
    why.add_argument("--stage", required=True)
    why.add_argument("--record-id", required=True)
    why.set_defaults(func=show_misses)


def _add_db_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--db",
        type=Path,
        default=None,
        help="cache/ledger SQLite file (default: SAFEFORGE_LLM_DB or LLMConfig)",
    )


def _ledger(args: argparse.Namespace) -> CallLedger | None:
    path = args.db or LLMConfig.from_env().db_path
    if not path.is_file():
        print(f"no ledger at {path}")
        return None
    return CallLedger(path)


def show_calls(args: argparse.Namespace) -> int:
    ledger = _ledger(args)
    if ledger is None:
        return 1
    header = f"{'stage':<16}{'calls':>7}{'hits':>7}{'retries':>8}{'failed':>7}{'tok in':>10}{'tok out':>10}{'cached':>10}{'USD':>13}"
    print(header)
    summaries = ledger.summary()
    for s in summaries:
        cost = f"{s.cost_usd:.6f}" + ("+?" if s.unpriced_calls else "")
        print(
            f"{s.stage:<16}{s.calls:>7}{s.cache_hits:>7}{s.retries:>8}{s.failures:>7}"
            f"{s.tokens_in:>10}{s.tokens_out:>10}{s.tokens_cached:>10}{cost:>13}"
        )
    if any(s.unpriced_calls for s in summaries):
        print("+? = some calls used a model without a price; their cost is not included")
    return 0


def show_misses(args: argparse.Namespace) -> int:
    ledger = _ledger(args)
    if ledger is None:
        return 1
    notes: list[str] = []
    for row in ledger.rows(stage=args.stage, record_id=args.record_id):
        if row.cache_note and row.cache_note not in notes:
            notes.append(row.cache_note)
    if not notes:
        print(f"no cache misses recorded for stage {args.stage!r}, record {args.record_id!r}")
        return 0
    for note in notes:
        print(note)
    return 0
