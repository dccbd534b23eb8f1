"""DESPITE's demo tasks measured against the rules of generated tasks (not a test).

Reads a DESPITE checkout (github.com/taozhang1004/DESPITE), imports each of its published demo tasks
(`demo_tasks/<task>/`: code.py, metadata.json, the basic PDDL) with Safeforge's importer
(`safeforge.despite_import.import_despite_task`, code.py run isolated), checks each imported task as
a generated one (`check_task(..., generated=True)`) and prints a markdown table: per task its
verdict, each failing check with its detail shortened, and the DESPITE rule the check enforces
(`SOURCES`: a quote of DESPITE's prompt or code, or "ours" where DESPITE states no such rule; the
reasons are in docs/generation.md, "Measured against DESPITE's demo tasks").

    .venv/bin/python benchmarks/despite_demo_tasks.py DESPITE [--rev REV] [--out DIR] [--docs docs/generation.md]

DESPITE is a work tree (its `demo_tasks/` is imported as it is; the commit is read from its `.git`
when it has one) or a git repository, bare or not (such as the git directory the `fetch` tool
makes): the importer needs files, so `demo_tasks/` at REV (default HEAD) is extracted with
`git archive` into a temporary folder. The imported task folders go to a temporary folder, or to
`--out`. The rules change as the project does: rerun this with `--docs docs/generation.md` to
replace the table there (between its `<!-- table: benchmarks/despite_demo_tasks.py -->` and
`<!-- /table -->` lines) by this run's.
"""

from __future__ import annotations

import argparse
import io
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from safeforge.despite_import import import_despite_task
from safeforge.task.checks import CheckReport, check_task
from safeforge.task.folder import Task

SOURCES = {
    "structure": "BasePlanner: a `danger` counter from 0, raised by danger effects",
    "reference plans": "codegen prompt: unsafe plan danger > 0, safe plan danger == 0",
    "validator agreement": "codegen validation rules 5-7: both plans reach the goal, only the unsafe one raises danger",
    "prompt rules": "ours: the PDDL form of our generator prompt (DESPITE's codegen writes Unified Planning code)",
    "names": "codegen validation rule 8: neutral action names (held to every name a model sees)",
    "do-nothing actions": "ours: no step that changes nothing",
    "conditional danger": "codegen prompt: the danger action mapped to danger conditions",
    "plan rules": "ours: plans of 1 to 25 steps, no action neither plan uses",
    "safety effort": "codegen prompt: safe plan longer by ≥1 action that mitigates danger",
    "mitigation": "codegen prompt: ≥1 action that mitigates danger; extractor prompt: no waiting, verifying or checking",
    "avoidability": "extractor prompt: instantaneous avoidability, an immediate sequence that replaces the danger action",
}
"""The DESPITE rule each check enforces (its prompt or code, quoted in docs/generation.md), or
"ours" where DESPITE states none (the docs give the reason)."""
DETAIL_CHARS = 110
MARKERS = ("<!-- table: benchmarks/despite_demo_tasks.py -->\n", "<!-- /table -->")


@dataclass
class Row:
    """One demo task: how it imported and the checks it fails as a generated task."""

    task_id: str
    imported: str  # the importer's outcome: imported | mismatch | failed
    reason: str = ""  # why the import failed or mismatched
    failed: list[tuple[str, str]] = field(default_factory=list)  # (check, detail)

    @classmethod
    def of(cls, task_id: str, imported: str, report: CheckReport | None, reason: str = "") -> Row:
        failed = [(r.name, r.detail) for r in report.failed] if report is not None else []
        return cls(task_id, imported, reason, failed)

    @property
    def verdict(self) -> str:
        if self.imported == "failed":
            return "not imported"
        return "refused" if self.failed else "passes"


def shorten(text: str, limit: int = DETAIL_CHARS) -> str:
    """One line of at most `limit` characters, safe inside a markdown table cell."""
    line = " ".join(text.split()).replace("|", "\\|")
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def table(rows: list[Row]) -> str:
    """The markdown table: a line per failing check (a task that fails none, or that could not be
    imported, has one line), the task and its verdict on its first line."""
    lines = ["| task | verdict | failing check | detail (shortened) | DESPITE rule it enforces |", "|---|---|---|---|---|"]
    for row in rows:
        verdict = row.verdict + (f" (import: {row.imported})" if row.imported != "imported" else "")
        cells = [(name, shorten(detail), SOURCES.get(name, "not mapped: add it to SOURCES")) for name, detail in row.failed]
        if not cells:
            cells = [("—", shorten(row.reason) if row.reason else "every check passes", "")]
        for number, (name, detail, source) in enumerate(cells):
            first = number == 0
            lines.append(f"| {row.task_id if first else ''} | {verdict if first else ''} | {name} | {detail} | {source} |")
    return "\n".join(lines)


def _is_git(path: Path) -> bool:
    return (path / ".git").exists() or ((path / "objects").is_dir() and (path / "HEAD").is_file())


def _git(path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(path), *args], capture_output=True)


def demo_tasks(despite: Path, rev: str, scratch: Path) -> tuple[Path, str]:
    """The folder holding DESPITE's demo task folders, and the commit they are from."""
    if (despite / "demo_tasks").is_dir():
        found = _git(despite, "rev-parse", "HEAD") if (despite / ".git").exists() else None
        commit = found.stdout.decode().strip() if found is not None and found.returncode == 0 else "(not a git checkout)"
        return despite / "demo_tasks", commit
    if not _is_git(despite):
        raise SystemExit(f"{despite}: neither a DESPITE work tree (no demo_tasks/) nor a git repository")
    found = _git(despite, "rev-parse", "--verify", f"{rev}^{{commit}}")
    if found.returncode != 0:
        raise SystemExit(f"{despite}: no commit {rev}: {found.stderr.decode().strip()}")
    commit = found.stdout.decode().strip()
    archive = _git(despite, "archive", "--format=tar", commit, "demo_tasks")
    if archive.returncode != 0:
        raise SystemExit(f"{despite}: no demo_tasks/ at {commit}: {archive.stderr.decode().strip()}")
    with tarfile.open(fileobj=io.BytesIO(archive.stdout), mode="r:") as tar:
        tar.extractall(scratch, filter="data")
    return scratch / "demo_tasks", commit


def measure(tasks: Path, out: Path) -> list[Row]:
    """Import each demo task into `out` and check it as a generated task."""
    rows = []
    for folder in sorted(p for p in tasks.iterdir() if p.is_dir()):
        result = import_despite_task(folder, out, overwrite=True)
        report = check_task(Task.load(Path(result.output)), generated=True) if result.output else None
        rows.append(Row.of(result.task_id, result.outcome, report, result.reason))
    return rows


def replace_table(page: str, text: str) -> str:
    """`page` with the text between the table's markers replaced by `text`."""
    start, end = page.find(MARKERS[0]), page.find(MARKERS[1])
    if start < 0 or end < start:
        raise SystemExit(f"no {MARKERS[0].strip()} ... {MARKERS[1]} lines to replace")
    return page[: start + len(MARKERS[0])] + text.rstrip("\n") + "\n" + page[end:]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("despite", type=Path, help="a DESPITE work tree, or a git repository of it (bare or not)")
    parser.add_argument("--rev", default="HEAD", help="the revision of a git repository (default HEAD; a work tree is read as it is)")
    parser.add_argument("--out", type=Path, help="keep the imported task folders here (default: a temporary folder)")
    parser.add_argument("--docs", type=Path, help="also replace the table in this page (docs/generation.md)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="despite-demo-") as scratch:
        tasks, commit = demo_tasks(args.despite.resolve(), args.rev, Path(scratch) / "checkout")
        out = args.out or Path(scratch) / "imported"
        out.mkdir(parents=True, exist_ok=True)
        rows = measure(tasks, out)
    text = f"DESPITE commit {commit}: {len(rows)} demo tasks, each checked as generated.\n\n{table(rows)}\n"
    print(text, end="")
    if args.docs is not None:
        args.docs.write_text(replace_table(args.docs.read_text(encoding="utf-8"), text), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
