"""`safeforge runs list` and `safeforge runs show RUN`: what the runs in outputs/ did."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from safeforge.common.printable import printable
from safeforge.runs import RUN_SPEC
from safeforge.runs.distribution import format_rate
from safeforge.runs.overview import REPLAY_NOTE, RunOverview, format_cost, format_usd, list_runs, run_overview
from safeforge.settings import Settings

SHOWN_INVOCATIONS = 5
"""`runs show` lists the last invocations of a run (run.json keeps them all)."""


def register(subparsers: argparse._SubParsersAction) -> None:
    runs = subparsers.add_parser("runs", help="the runs: records per state, stage and source, costs")
    commands = runs.add_subparsers(dest="runs_command", metavar="{list,show}", required=True)

    listing = commands.add_parser("list", help="one line per run, newest first")
    listing.add_argument("--outputs", type=Path, help="folder of runs (default: SAFEFORGE_OUTPUTS or outputs/)")
    listing.add_argument("--json", action="store_true", help="one JSON object per run")
    listing.set_defaults(func=run_list)

    show = commands.add_parser("show", help="counts per state, source and stage; acceptance; tokens, dollars")
    show.add_argument("run", help="a run name (a folder of --outputs) or a run folder")
    show.add_argument("--outputs", type=Path, help="folder of runs (default: SAFEFORGE_OUTPUTS or outputs/)")
    show.add_argument("--json", action="store_true", help="the summary as one JSON object")
    show.set_defaults(func=run_show)


def run_list(args: argparse.Namespace) -> int:
    outputs = args.outputs or Settings.load().outputs
    runs = [run_overview(folder, tasks=False) for folder in list_runs(outputs)]  # the ledgers say all it shows
    if args.json:
        for overview in runs:
            print(json.dumps(overview.to_dict()))
        return 0
    if not runs:
        print(f"no runs in {outputs}")
        return 0
    print(f"{'run':<28}{'records':>8}{'pending':>8}{'checked':>8}{'accepted':>9}{'errors':>7}{'USD':>12}")
    for o in runs:
        waiting = o.states.get("pending", 0) + o.states.get("extracted", 0)
        name = printable(o.name)  # a folder's name, shown as it is spelled
        print(f"{name:<28}{o.records:>8}{waiting:>8}{o.checked:>8}{o.accepted:>9}{o.states.get('error', 0):>7}{o.cost.cost_usd:>12.6f}")
    return 0


def run_show(args: argparse.Namespace) -> int:
    folder = Path(args.run)
    if not folder.is_dir():
        folder = (args.outputs or Settings.load().outputs) / args.run
    overview = run_overview(folder)
    # failure reasons can quote a model's reply or a record: escapes are shown, never acted on
    print(json.dumps(overview.to_dict(), indent=2) if args.json else printable(format_overview(overview), keep="\n"))
    return 0


def format_overview(o: RunOverview) -> str:
    """The plain-text report of `runs show`."""
    lines = [
        f"run {o.name} ({o.root})",
        f"records: {o.records}   accepted: {o.accepted} ({format_rate(o.acceptance_rate)})   passed checks: {o.checked}",
        o.spoc_line,
        "",
        "states: " + ", ".join(f"{state} {n}" for state, n in o.states.items()),
        "",
        "per source:",
    ]
    for source, counts in sorted(o.by_source.items()):
        lines.append(f"  {source:<12} " + ", ".join(f"{state} {n}" for state, n in counts.items()))
    width = max(10, *(len(s.stage) + 1 for s in o.stages))
    lines += ["", f"{'stage':<{width}}{'entered':>8}{'passed':>8}{'rejected':>9}{'errors':>8}{'waiting':>8}{'rate':>8}"]
    lines += [
        f"{s.stage:<{width}}{s.entered:>8}{s.passed:>8}{s.rejected:>9}{s.errors:>8}{s.waiting:>8}{format_rate(s.rate):>8}" for s in o.stages
    ]
    if len(o.stages_by_source) > 1:
        for source, funnels in o.stages_by_source.items():
            lines.append(f"  {source}: " + ", ".join(f"{s.stage} {s.passed}/{s.entered} ({format_rate(s.rate)})" for s in funnels))
    c = o.cost
    lines += [
        "",
        *([f"{REPLAY_NOTE}:"] if o.replayed else []),
        f"LLM: {c.calls} calls, {c.cache_hits} cache hits, {c.tokens_in} tokens in, "
        f"{c.tokens_out} out ({c.tokens_cached} cached), {format_cost(c.cost_usd, c.unpriced_calls)}",
    ]
    for stage, v in c.by_stage.items():
        spent = format_cost(v["cost_usd"], v["unpriced_calls"])
        lines.append(f"  {stage:<12} {v['calls']} calls, {v['tokens_in']} in, {v['tokens_out']} out, {spent}")
    lines.append(f"per accepted task: {format_usd(o.cost_per_accepted_usd)}   per checked task: {format_usd(o.cost_per_checked_usd)}")
    for state, reasons in o.reasons.items():
        lines.append(f"{state} reasons:")
        lines += [f"  {n:>5}  {reason or '(none given)'}" for reason, n in reasons[:5]]
        if len(reasons) > 5:
            lines.append(f"  ... and {len(reasons) - 5} more")
    lines += ["", *format_spec(o.spec)]
    if o.distribution is not None:
        lines += ["", *o.distribution.lines()]
    return "\n".join(lines)


def format_spec(document: dict[str, Any] | None) -> list[str]:
    """What made the run (its run.json), in lines."""
    if document is None:
        return [f"made with: unknown (no {RUN_SPEC}: the run was made before runs recorded their spec)"]
    spec, invocations = document["spec"], document.get("invocations", [])
    lines = [f"made with ({RUN_SPEC}, {len(invocations)} invocation(s)):"]
    for section, values in spec.items():
        shown = ", ".join(f"{key} {value}" for key, value in values.items()) if isinstance(values, dict) else str(values)
        lines.append(f"  {section:<9} {shown}")
    if len(invocations) > SHOWN_INVOCATIONS:
        lines.append(f"  ... {len(invocations) - SHOWN_INVOCATIONS} earlier invocation(s) in {RUN_SPEC}")
    for entry in invocations[-SHOWN_INVOCATIONS:]:
        code = entry.get("code", {})
        revision = code.get("git")
        version = f"safeforge {code.get('safeforge')}" + (
            f" (git {revision[:10]}{', modified' if code.get('git_modified') else ''})" if revision else ""
        )
        options = entry.get("options", {})
        executor = entry.get("executor", {})
        lines.append(
            f"  {entry.get('at')}: {version}; {options.get('source')} from {options.get('path') or 'its default data'}; "
            f"executor {executor.get('name')}" + (f" x{executor['workers']}" if "workers" in executor else "")
        )
        lines += [f"    changed: {change}" for change in entry.get("changes", [])]
        if "note" in entry:
            lines.append(f"    note: {entry['note']}")
    return lines
