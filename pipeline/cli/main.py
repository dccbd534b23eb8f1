"""The `safeforge` command line: one entry point, one module per command group.

`COMMANDS` names every command with its one-line help and the module that defines it; only the
module of the command being run is imported (each exposes `register(subparsers)`, which adds its
commands and sets `func` on each), so `safeforge --help` imports none of them. The input limits of
the settings apply to every command; a command that sets `bound` (a context manager, given the
arguments) runs within it, settings included (`task check`'s time limit). Errors are caught here,
in one place, and reported in one line (control characters escaped: messages may quote hostile
input): an error meant for the user (`SafeforgeError`) exits with status 2, an unexpected one (a
bug) with status 1; `--debug` shows the traceback, and the library's debug log, too. Exit status 1
also means the command ran and found problems (a failed check, records that ended in error).
Pydantic plugins are off (`PYDANTIC_DISABLE_PLUGINS=__all__`) unless that variable is set.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import logging
import os
import sys
import traceback
from collections.abc import Iterator, Sequence

from safeforge.common.errors import SafeforgeError, StorageError, storage_problem
from safeforge.common.limits import limits_in, use_limits
from safeforge.common.printable import printable

UNEXPECTED_EXIT = 1

# command -> (module, help), in the order `safeforge --help` lists them
COMMANDS: dict[str, tuple[str, str]] = {
    "task": ("safeforge.cli.task", "check, validate, show or create one task folder"),
    "workbench": ("safeforge.cli.workbench", "a local page over a folder of tasks, a run or a release: see, edit and re-check tasks"),
    "sources": ("safeforge.cli.sources", "list the data sources, show their records"),
    "llm": ("safeforge.cli.llm", "LLM access: replay server, call ledger, cache misses"),
    "generate": ("safeforge.cli.generate", "extract dangers from a source's records and generate checked tasks (LLM)"),
    "import-despite": ("safeforge.cli.import_despite", "import DESPITE task folders (code.py) into our task format"),
    "eval": ("safeforge.cli.evaluate", "evaluate an LLM planner on tasks: F, S, SP, SI with bootstrap intervals"),
    "eval-split": ("safeforge.cli.evaluate", "hard/easy split from a panel of results files (hard: mean score <= 0.8)"),
    "eval-noise": ("safeforge.cli.evaluate", "write a copy of a task with N decoy objects and N decoy actions, checked"),
    "runs": ("safeforge.cli.runs", "the runs: records per state, stage and source, costs"),
    "services": ("safeforge.cli.services", "start, stop or show the local services of the Prefect application"),
    "publish": ("safeforge.cli.publish", "release the accepted tasks of runs (parquet, card, plots, archive; the Hub)"),
    "spoc": ("safeforge.cli.spoc", "export or check SPOC goal-condition files"),
    "review": ("safeforge.cli.review", "human review of checked tasks in Label Studio"),
    "config": ("safeforge.cli.config", "the effective settings and where each came from"),
}


def build_parser(argv: Sequence[str] = ()) -> argparse.ArgumentParser:
    """The parser; the command named in `argv` (if any) gets its full definition, the others
    only their name and help (enough for `safeforge --help`)."""
    parser = argparse.ArgumentParser(
        prog="safeforge",
        description="Generate, check, review, publish and evaluate safety-aware planning tasks.",
    )
    parser.add_argument("--debug", action="store_true", help="show the traceback of an error")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    chosen = next((arg for arg in argv if arg in COMMANDS), None)
    module = COMMANDS[chosen][0] if chosen else None
    registered: set[str] = set()
    for name, (owner, help_text) in COMMANDS.items():
        if owner == module:
            if owner not in registered:
                importlib.import_module(owner).register(sub)
                registered.add(owner)
        else:
            sub.add_parser(name, help=help_text, add_help=False)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command `argv`; without it, the command line's (then the command is the process:
    `args.own_process`)."""
    own_process = argv is None
    if own_process:  # no scan of every installed package for pydantic plugins (tenths of a second), unless asked
        os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser(argv).parse_args(argv)
    args.own_process = own_process
    with _debug_log() if args.debug else contextlib.nullcontext():
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    """The command, with every error reported in one line."""
    try:
        with args.bound(args) if "bound" in args else contextlib.nullcontext():
            use_limits(limits_in(os.environ))
            status = int(args.func(args) or 0)
        sys.stdout.flush()  # a reader that went away (`| head`) shows here, not at exit
        return status
    except SafeforgeError as exc:
        return _report(args, str(exc), exc.exit_code, exc.hint)
    except BrokenPipeError:  # e.g. piped into `head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # nothing left to flush at exit
        return 0
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except OSError as exc:  # the environment's refusal (a full disk, a permission), not a bug
        problem = storage_problem(exc)
        if problem is None:
            return _report(args, f"{exc.filename or 'a file'}: {exc.strerror or exc}", SafeforgeError.exit_code)
        return _report(args, f"{exc.filename or 'a file'}: cannot be written: {problem}", StorageError.exit_code)
    except Exception as exc:  # noqa: BLE001 - a bug: one line, the traceback with --debug
        return _report(args, _unexpected(exc), UNEXPECTED_EXIT)


def _report(args: argparse.Namespace, message: str, code: int, hint: str = "") -> int:
    """The message on one line (escaped: it may quote the input), then our hint as written."""
    if args.debug:
        traceback.print_exc()
    print(f"error: {printable(message)}", file=sys.stderr)
    if hint:
        print(hint, file=sys.stderr)
    return code


def _unexpected(exc: BaseException) -> str:
    return f"unexpected failure: {type(exc).__name__}: {exc} (a bug in Safeforge; --debug shows where)"


@contextlib.contextmanager
def _debug_log() -> Iterator[None]:
    """Safeforge's debug log (tracebacks of records that failed unexpectedly included) on stderr,
    for the duration of the command."""
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    logger = logging.getLogger("safeforge")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
