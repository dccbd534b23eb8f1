"""BEHAVIOR-1K activity definitions (BDDL) -> Records, one per activity.

Layout: ``activity_definitions/<activity>/problem0.bddl``; domain files (``domain_*.bddl``) are not
activities. Each problem is parsed (objects with their WordNet synsets, initial state, goal) into a
readable description, followed by the raw BDDL. Record id: ``bddl_<activity>``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from safeforge.pddl.sexpr import SExpr, parse, to_text
from safeforge.sources.errors import BAD_FILE_ERRORS, SourceError, reason
from safeforge.sources.record import Record
from safeforge.sources.report import ReadReport, SkippedRow
from safeforge.sources.spec import Download, Licence, SourceSpec, fixed_downloads
from safeforge.sources.textio import dataset_entries, links_not_followed, read_text, require_dir, skip_links

SOURCE = "bddl"
PROBLEM_FILE = "problem0.bddl"

# predicate -> (affirmative, negated) sentence templates
_PHRASES = {
    "ontop": ("{0} is on top of {1}", "{0} is not on top of {1}"),
    "inside": ("{0} is inside {1}", "{0} is not inside {1}"),
    "nextto": ("{0} is next to {1}", "{0} is not next to {1}"),
    "under": ("{0} is under {1}", "{0} is not under {1}"),
    "touching": ("{0} is touching {1}", "{0} is not touching {1}"),
    "overlaid": ("{0} is overlaid on {1}", "{0} is not overlaid on {1}"),
    "attached": ("{0} is attached to {1}", "{0} is not attached to {1}"),
    "draped": ("{0} is draped over {1}", "{0} is not draped over {1}"),
    "covered": ("{0} is covered with {1}", "{0} is not covered with {1}"),
    "filled": ("{0} is filled with {1}", "{0} is not filled with {1}"),
    "saturated": ("{0} is saturated with {1}", "{0} is not saturated with {1}"),
    "contains": ("{0} contains {1}", "{0} does not contain {1}"),
    "insource": ("{0} is a source of {1}", "{0} is not a source of {1}"),
    "inroom": ("{0} is in the {1}", "{0} is not in the {1}"),
    "grasped": ("{0} is grasping {1}", "{0} is not grasping {1}"),
    "future": ("{0} is yet to be made", "{0} is not yet to be made"),
    "real": ("{0} exists", "{0} does not exist"),
}


def read_bddl(path: str | Path, *, report: ReadReport | None = None) -> Iterator[Record]:
    """Records of every ``<activity>/problem0.bddl`` under `path` (or of one problem file).

    `path` may be ``activity_definitions/``, its parent, one activity directory or one .bddl file.
    """
    files, links = _problem_files(Path(path))
    report = report if report is not None else ReadReport()
    skip_links(links, report)
    return _records(files, report)


def _problem_files(path: Path) -> tuple[list[Path], list[Path]]:
    """The problem files `path` names or holds, and the links in it that are not followed."""
    if path.is_file():
        return [path], []
    require_dir(path)
    if (path / PROBLEM_FILE).is_file():
        return [path / PROBLEM_FILE], []
    if (path / "activity_definitions").is_dir():
        path = path / "activity_definitions"
    found, links = dataset_entries(path, max_depth=1)
    files = [f for f in found if f.name == PROBLEM_FILE and f.parent != path]
    if not files:
        raise SourceError(path, f"no <activity>/{PROBLEM_FILE} files found{links_not_followed(links)}")
    return files, links


def _records(files: list[Path], report: ReadReport) -> Iterator[Record]:
    for file in files:
        report.read += 1
        try:
            record = activity_record(file)
        except BAD_FILE_ERRORS as exc:
            report.skip(SkippedRow(str(file), None, None, reason(exc)))
            continue
        yield record


def activity_record(file: Path) -> Record:
    """The Record of one problem file; ValueError if it is not a readable BDDL problem."""
    raw = read_text(file, "pddl_bytes")  # BDDL is PDDL's kin: the same bounds
    sections = _sections(parse(raw))
    activity = file.parent.name if file.name == PROBLEM_FILE else file.stem
    objects = _objects(sections.get(":objects", []))
    names = _display_names(objects)
    init = sections.get(":init", [])
    goal = sections.get(":goal", [])
    rooms = sorted({a[2] for a in init if isinstance(a, list) and len(a) == 3 and a[0] == "inroom"})
    description = "\n".join(
        [
            f"Activity: {activity.replace('_', ' ')} (BEHAVIOR-1K activity {activity})",
            f"Rooms: {', '.join(rooms) if rooms else 'not stated'}",
            "Objects:",
            *_object_lines(objects, names),
            "Initial state:",
            *(f"- {_sentence(atom, names)}" for atom in init),
            "Goal:",
            *(f"- {line}" for line in _goal_lines(goal, names)),
        ]
    )
    metadata = {
        "activity": activity,
        "problem": sections["problem"],
        "domain": sections.get(":domain", ""),
        "objects": objects,
        "rooms": rooms,
        "init": [to_text(a) for a in init],
        "goal": to_text(goal) if goal else "",
    }
    return Record(f"{SOURCE}_{activity}", SOURCE, f"{description}\n\nBDDL:\n{raw.strip()}", metadata, str(file))


def _sections(expressions: list[SExpr]) -> dict:
    define = next((e for e in expressions if isinstance(e, list) and e and e[0] == "define"), None)
    if define is None or len(define) < 2 or not isinstance(define[1], list) or len(define[1]) < 2:
        raise ValueError("no (define (problem ...)) form")
    kind, name = define[1][0], define[1][1]
    if kind != "problem":
        raise ValueError(f"a {kind} file, not an activity problem")
    sections: dict = {"problem": name}
    for part in define[2:]:
        if isinstance(part, list) and part and isinstance(part[0], str):
            head = part[0]
            sections[head] = part[1] if head in (":domain", ":goal") and len(part) > 1 else part[1:]
    if ":objects" not in sections or ":init" not in sections or ":goal" not in sections:
        raise ValueError("problem lacks :objects, :init or :goal")
    return sections


def _objects(tokens: list[SExpr]) -> dict[str, list[str]]:
    """``a b - type c - type2`` -> {"type": ["a", "b"], "type2": ["c"]} (WordNet synsets as types)."""
    objects: dict[str, list[str]] = {}
    pending: list[str] = []
    items = iter(tokens)
    for token in items:
        if not isinstance(token, str):
            raise ValueError("malformed :objects section")
        if token == "-":
            objects.setdefault(str(next(items, "object")), []).extend(pending)
            pending = []
        else:
            pending.append(token)
    if pending:
        objects.setdefault("object", []).extend(pending)
    return objects


def _lemma(synset: str) -> str:
    """``cinnamon__shaker.n.01`` -> "cinnamon shaker"."""
    return synset.split(".")[0].replace("__", " ").replace("_", " ")


def _display_names(objects: dict[str, list[str]]) -> dict[str, str]:
    names = {}
    for synset, instances in objects.items():
        for instance in instances:
            number = instance.rsplit("_", 1)[-1]
            names[instance] = _lemma(synset) if len(instances) == 1 else f"{_lemma(synset)} {number}"
    return names


def _object_lines(objects: dict[str, list[str]], names: dict[str, str]) -> list[str]:
    return [f"- {', '.join(names[i] for i in instances)} ({synset})" for synset, instances in objects.items()]


def _term(token: SExpr, names: dict[str, str]) -> str:
    if not isinstance(token, str):
        return to_text(token)
    bare = token.lstrip("?")
    if bare in names:
        return names[bare]
    return f"the {_lemma(bare)}" if token.startswith("?") else bare.replace("_", " ")


def _sentence(expr: SExpr | list, names: dict[str, str], negated: bool = False) -> str:
    """A readable sentence for a formula (atoms, not/and/or/imply, forall/exists/forn/forpairs)."""
    if isinstance(expr, str) or not expr:
        return to_text(expr)
    head, args = expr[0], expr[1:]
    if head == "not" and len(args) == 1:
        inner = args[0]
        if isinstance(inner, list) and inner and inner[0] not in _CONNECTIVES:
            return _sentence(inner, names, negated=not negated)
        return f"it is not the case that ({_sentence(inner, names)})"
    if head in _CONNECTIVES:
        return _CONNECTIVES[head](args, names)
    terms = [_term(a, names) for a in args]
    if head in _PHRASES and len(terms) == _PHRASES[head][0].count("{"):
        return _PHRASES[head][negated].format(*terms)
    if len(terms) == 1:
        state = head.replace("_", " ")
        return f"{terms[0]} is {'not ' if negated else ''}{state}"
    return f"{'not ' if negated else ''}{head}({', '.join(terms)})"


def _bound(var: SExpr) -> str:
    """``(?x.n.01 - x.n.01)`` -> "x"."""
    return _lemma(var[-1]) if isinstance(var, list) and var else str(var)


def _count(arg: SExpr) -> str:
    return arg[0] if isinstance(arg, list) and arg else str(arg)


_CONNECTIVES = {
    "and": lambda a, n: " and ".join(f"({_sentence(x, n)})" if _compound(x) else _sentence(x, n) for x in a),
    "or": lambda a, n: "either " + " or ".join(f"({_sentence(x, n)})" for x in a),
    "imply": lambda a, n: f"if {_sentence(a[0], n)} then {_sentence(a[1], n)}",
    "forall": lambda a, n: f"for every {_bound(a[0])}: {_sentence(a[1], n)}",
    "exists": lambda a, n: f"for some {_bound(a[0])}: {_sentence(a[1], n)}",
    "forn": lambda a, n: f"for {_count(a[0])} of the {_bound(a[1])}s: {_sentence(a[2], n)}",
    "forpairs": lambda a, n: f"pairing each {_bound(a[0])} with its own {_bound(a[1])}: {_sentence(a[2], n)}",
    "fornpairs": lambda a, n: (f"for {_count(a[0])} pairs of {_bound(a[1])} and {_bound(a[2])}: {_sentence(a[3], n)}"),
}


def _compound(expr: SExpr) -> bool:
    return isinstance(expr, list) and bool(expr) and expr[0] in ("or", "imply", "and")


def _goal_lines(goal: SExpr, names: dict[str, str]) -> list[str]:
    """Top-level conjuncts of the goal, one sentence each."""
    if isinstance(goal, list) and goal and goal[0] == "and":
        return [_sentence(part, names) for part in goal[1:]]
    return [_sentence(goal, names)] if goal else []


SPEC = SourceSpec(
    name=SOURCE,
    title="BEHAVIOR-1K activity definitions (BDDL)",
    read=read_bddl,
    expects="activity_definitions/<activity>/problem0.bddl (domain_*.bddl files are ignored)",
    homepage="https://behavior.stanford.edu",
    licence=Licence("MIT", "MIT (BEHAVIOR-1K activity definitions, Stanford Vision and Learning Lab)"),
    citation="""@article{li2024behavior1k,
  title = {{BEHAVIOR-1K}: A Human-Centered, Embodied {AI} Benchmark with 1,000 Everyday Activities and Realistic Simulation},
  author = {Li, Chengshu and Zhang, Ruohan and Wong, Josiah and Gokmen, Cem and Srivastava, Sanjana and
            Mart{\\'i}n-Mart{\\'i}n, Roberto and Wang, Chen and Levine, Gabrael and Ai, Wensi and Martinez, Benjamin and
            Yin, Hang and Lingelbach, Michael and Hwang, Minjune and Hiranaka, Ayano and Garlanka, Sujay and
            Aydin, Arman and Lee, Sharon and Sun, Jiankai and Anvari, Mona and Sharma, Manasi and Bansal, Dhruva and
            Hunter, Samuel and Kim, Kyu-Young and Lou, Alan and Matthews, Caleb R. and Villa-Renteria, Ivan and
            Tang, Jerry Huayang and Tang, Claire and Xia, Fei and Li, Yunzhu and Savarese, Silvio and Gweon, Hyowon and
            Liu, C. Karen and Wu, Jiajun and Fei-Fei, Li},
  journal = {arXiv preprint arXiv:2403.09227},
  year = {2024},
  eprint = {2403.09227},
  archivePrefix = {arXiv},
  note = {The citation the BEHAVIOR-1K project asks for; first presented at the 6th Conference on Robot Learning (CoRL 2022)}
}""",
    sample=("bddl", "activity_definitions"),
    full_data="bddl-3.6.0/bddl/activity_definitions",
    downloads=fixed_downloads(
        Download(
            "3.6.0",
            "https://files.pythonhosted.org/packages/33/16/6795fd638b593acd3c80c7a5aebb3471576d463e1b36a90154fa106ef5c5/bddl-3.6.0.tar.gz",
            "bddl-3.6.0.tar.gz",
            "81d40ab7a32769828ecad3110c7db5e40e26cfb29b1158b3448a6ccb91e5d386",
            2338616,
            "tar.gz",
            note="the bddl 3.6.0 source distribution on PyPI (1,016 activities)",
        )
    ),
    installed_package=("bddl", "activity_definitions"),
)
