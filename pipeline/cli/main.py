"""The `safeforge` command line: one entry point, one sub-command group per area.

Each area module exposes `register(subparsers)`, which adds its sub-commands and sets
`func` on each parser; `main` dispatches to it.
"""
from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence


# Modules with a `register(subparsers)`, in the order their commands are listed.
AREAS = (
    "pipeline.cli.task",
    "pipeline.cli.sources",
    "pipeline.cli.llm",
    "pipeline.cli.generate",
    "pipeline.cli.import_despite",
    "pipeline.cli.evaluate",
    "pipeline.cli.runs",
    "pipeline.cli.services",
    "pipeline.cli.publish",
    "pipeline.cli.spoc",
    "pipeline.cli.review",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="safeforge",
        description="Generate, check, review, publish and evaluate safety-aware planning tasks.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for area in AREAS:
        importlib.import_module(area).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except BrokenPipeError:  # e.g. piped into `head`
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130

