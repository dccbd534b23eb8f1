"""`safeforge config`: every setting's effective value and where it came from (variable or default)."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict

from safeforge.settings import Settings, effective_settings


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "config",
        help="the effective settings and where each came from",
        description="Print every setting Safeforge reads from the environment: its variable, its "
        "effective value (secrets are never shown) and where the value came from.",
    )
    shown = parser.add_mutually_exclusive_group()
    shown.add_argument("--json", action="store_true", help="one JSON object per setting")
    shown.add_argument(
        "--markdown", action="store_true", help="the table of every variable, its default, range and meaning (docs/configuration.md)"
    )
    parser.set_defaults(func=run_config)


def variables_markdown() -> str:
    """The table of docs/configuration.md, generated from the settings model."""
    lines = ["| variable | default | range | meaning |", "|---|---|---|---|"]
    for variable, name, default, meaning in Settings.variables():
        escaped = meaning.replace("|", "\\|")
        allowed = Settings.range_of(name)
        lines.append(f"| `{variable}` | `{default}` | {allowed.bounds() if allowed else ''} | {escaped} |")
    return "\n".join(lines) + "\n"


def run_config(args: argparse.Namespace) -> int:
    if args.markdown:
        print(variables_markdown(), end="")
        return 0
    rows = effective_settings()
    if args.json:
        for row in rows:
            print(json.dumps(asdict(row)))
        return 0
    width = max(len(row.variable) for row in rows)
    for row in rows:
        print(f"{row.variable:<{width}}  {row.value}  ({row.source})")
    return 0
