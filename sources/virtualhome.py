"""VirtualHome programs with their initial states -> Records, one per program.

Layout (``programs_processed_precond_nograb_morepreconds``): ``withoutconds/<sub>/<stem>.txt``
(title, description, then one ``[Action] <object> (id)`` step per line) paired by relative path
with ``initstate/<sub>/<stem>.json`` (a list of ``{predicate: arguments}`` facts); flat folders
(no <sub>) work too. The initial state can be huge, so the text carries a summary cut to a
character budget. Record id: ``virtualhome_<sub>__<stem>`` (``virtualhome_<stem>`` when flat).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from safeforge.common.ranges import Range
from safeforge.sources.errors import BAD_FILE_ERRORS, SourceError, reason
from safeforge.sources.record import Record
from safeforge.sources.report import ReadReport, SkippedRow
from safeforge.sources.spec import Download, Licence, SourceOption, SourceSpec, fixed_downloads
from safeforge.sources.textio import LINK_SKIPPED, dataset_entries, read_json, read_text, require_dir, skip_links

SOURCE = "virtualhome"
PROGRAMS, STATES = "withoutconds", "initstate"
STATE_BUDGET = 1500
_UNARY = {
    "is_on": "is on",
    "is_off": "is off",
    "plugged": "is plugged in",
    "unplugged": "is unplugged",
    "closed": "is closed",
    "open": "is open",
    "free": "is free",
}
_BINARY = {"inside": "is inside", "in": "is in", "location": "is in", "on": "is on", "atreach": "is within reach of"}
_ORDER = {"inside": 1, "in": 1, "on": 1, "location": 2, "atreach": 4}  # unary facts: 0, others: 3


def read_virtualhome(path: str | Path, *, report: ReadReport | None = None, state_budget: int = STATE_BUDGET) -> Iterator[Record]:
    """Records of every program under `path` (the folder holding withoutconds/ and initstate/,
    or its parent); `state_budget` caps the initial-state summary in characters."""
    root = _dataset_root(Path(path))
    return _records(root, report if report is not None else ReadReport(), state_budget)


def _dataset_root(path: Path) -> Path:
    require_dir(path)
    if (path / PROGRAMS).is_dir():
        return path
    inner = [d for d in sorted(path.iterdir()) if (d / PROGRAMS).is_dir()]
    if len(inner) == 1:
        return inner[0]
    raise SourceError(path, f"expected a folder with {PROGRAMS}/ and {STATES}/ (or exactly one such sub-folder)")


def _stems(folder: Path, suffix: str, report: ReadReport) -> dict[str, Path]:
    """Relative path without suffix ("sub/stem" or "stem") -> file, flat or one level down (the
    links met there are skipped, not followed)."""
    if not folder.is_dir() or folder.is_symlink():
        return {}
    files, links = dataset_entries(folder, max_depth=1)
    skip_links(links, report)
    return {f.relative_to(folder).with_suffix("").as_posix(): f for f in files if f.suffix == suffix}


def _records(root: Path, report: ReadReport, budget: int) -> Iterator[Record]:
    programs, states = _stems(root / PROGRAMS, ".txt", report), _stems(root / STATES, ".json", report)
    if not programs:
        linked = f" ({PROGRAMS}/ {LINK_SKIPPED})" if (root / PROGRAMS).is_symlink() else ""
        raise SourceError(root / PROGRAMS, f"no program .txt files found{linked}")
    for key in sorted(programs.keys() | states.keys()):
        report.read += 1
        if key not in states:
            report.skip(SkippedRow(str(programs[key]), None, None, f"no matching {STATES}/{key}.json"))
            continue
        if key not in programs:
            report.skip(SkippedRow(str(states[key]), None, None, f"no matching {PROGRAMS}/{key}.txt"))
            continue
        try:
            record = program_record(key, programs[key], states[key], budget, root)
        except BAD_FILE_ERRORS as exc:
            report.skip(SkippedRow(str(getattr(exc, "file", programs[key])), None, None, reason(exc)))
            continue
        yield record


def program_record(key: str, program_file: Path, state_file: Path, budget: int = STATE_BUDGET, root: Path | None = None) -> Record:
    """The Record of one program/initial-state pair; ValueError if either is unusable. The metadata
    names both files relative to the dataset folder `root` (no path of this machine)."""
    title, description, steps = parse_program(read_text(program_file))
    try:
        facts = read_json(state_file)
    except ValueError as exc:
        raise _in_file(exc, state_file) from exc
    if not isinstance(facts, list):
        raise _in_file(ValueError("initial state is not a list of facts"), state_file)
    summary = summarise_state(facts, budget)
    text = "\n".join(
        [
            f"Title: {title}",
            f"Description: {description or '(none)'}",
            "Steps:",
            *(f"{n}. {step}" for n, step in enumerate(steps, start=1)),
            f"Initial state ({len(facts)} facts): {summary or '(empty)'}",
        ]
    )
    sub, _, stem = key.rpartition("/")
    metadata = {
        "title": title,
        "description": description,
        "steps": steps,
        "subfolder": sub,
        "stem": stem,
        "program_file": _relative(program_file, root),
        "initstate_file": _relative(state_file, root),
        "initial_state_facts": len(facts),
        "state_predicates": dict(_predicates(facts)),
        "state_summary": summary,
    }
    return Record(f"{SOURCE}_{key.replace('/', '__')}", SOURCE, text, metadata, str(program_file))


def _relative(file: Path, root: Path | None) -> str:
    return (file.relative_to(root) if root is not None and file.is_relative_to(root) else Path(file.name)).as_posix()


def _in_file(exc: ValueError, file: Path) -> ValueError:
    exc.file = file  # type: ignore[attr-defined]
    return exc


def parse_program(text: str) -> tuple[str, str, list[str]]:
    """(title, description, steps) of a program file; ValueError when title or steps are missing."""
    lines = [line.strip() for line in text.splitlines()]
    title = lines[0] if lines else ""
    steps = [line for line in lines if line.startswith("[")]
    first_step = next((i for i, line in enumerate(lines) if line.startswith("[")), len(lines))
    description = " ".join(line for line in lines[1:first_step] if line)
    if not title or title.startswith("["):
        raise ValueError("program has no title line")
    if not steps:
        raise ValueError("program has no [Action] steps")
    return title, description, steps


def _predicates(facts: list) -> Counter[str]:
    return Counter(k for fact in facts if isinstance(fact, dict) for k in fact)


def _thing(arg) -> str:
    """["sink", "1"] -> "sink 1"."""
    if isinstance(arg, list) and len(arg) == 2 and all(isinstance(a, str) for a in arg):
        return f"{arg[0]} {arg[1]}"
    return str(arg)


def _fact_sentence(predicate: str, args) -> tuple[int, str]:
    if isinstance(args, list) and len(args) == 2 and all(isinstance(a, list) for a in args):
        verb = _BINARY.get(predicate, predicate.replace("_", " "))
        return _ORDER.get(predicate, 3), f"{_thing(args[0])} {verb} {_thing(args[1])}"
    state = _UNARY.get(predicate, "is " + predicate.removeprefix("is_").replace("_", " "))
    return 0, f"{_thing(args)} {state}"


def summarise_state(facts: list, budget: int = STATE_BUDGET) -> str:
    """Facts as short sentences, states first and reachability last, cut to `budget` characters."""
    sentences = sorted(
        (_fact_sentence(predicate, args) for fact in facts if isinstance(fact, dict) for predicate, args in fact.items()),
        key=lambda item: item[0],
    )
    shown: list[str] = []
    used = 0
    for _, sentence in sentences:
        if used + len(sentence) + 2 > budget:
            break
        shown.append(sentence)
        used += len(sentence) + 2
    summary = "; ".join(shown)
    if len(shown) < len(sentences):
        summary += f"; ... and {len(sentences) - len(shown)} more facts"
    return summary


SPEC = SourceSpec(
    name=SOURCE,
    title="VirtualHome programs",
    read=read_virtualhome,
    expects="programs_processed_precond_nograb_morepreconds/{withoutconds/<sub>/*.txt, initstate/<sub>/*.json} "
    "paired by relative path (flat folders work too)",
    homepage="http://virtual-home.org",
    licence=Licence(
        "MIT",
        "uncertain (VirtualHome: MIT now; CC BY-NC-SA 4.0 from 2019-09 to 2022-04; no licence at the 2018 dataset commit)",
        uncertain=True,
    ),
    citation="""@inproceedings{puig2018virtualhome,
  title = {{VirtualHome}: Simulating Household Activities via Programs},
  author = {Puig, Xavier and Ra, Kevin and Boben, Marko and Li, Jiaman and Wang, Tingwu and Fidler, Sanja and
            Torralba, Antonio},
  booktitle = {2018 IEEE Conference on Computer Vision and Pattern Recognition (CVPR)},
  pages = {8494--8502},
  year = {2018},
  doi = {10.1109/CVPR.2018.00886},
  eprint = {1806.07011},
  archivePrefix = {arXiv}
}""",
    sample=("virtualhome", "programs_processed_precond_nograb_morepreconds"),
    full_data="programs_processed_precond_nograb_morepreconds",
    downloads=fixed_downloads(
        Download(
            "programs_processed_precond_nograb_morepreconds",
            "http://virtual-home.org/release/programs/programs_processed_precond_nograb_morepreconds.zip",
            "programs_processed_precond_nograb_morepreconds.zip",
            None,
            unpack="zip",
            note="virtual-home.org publishes no checksum: the first download's is recorded",
        )
    ),
    options=(SourceOption("state_budget", "--state-budget", "characters of initial-state summary", range=Range(1, 1 << 20)),),
)
