"""Hypothesis properties of every reader of untrusted input, run by `test_fuzz_readers.py` in one
child process within an address-space limit (not collected on their own: the name has no `test_`).

Each property feeds a reader generated hostile input — real files cut, spliced and sprinkled with
bytes, deep nesting, huge runs of one character, control characters, byte-order marks — and
asserts a clean end: a result, or the reader's documented error (a `SafeforgeError` naming what is
wrong); for the sources, every record read is yielded or skipped with a reason. The issue's inputs
are kept as explicit examples.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from tests_paths import EXAMPLES, SAMPLES

from safeforge.common.errors import SafeforgeError
from safeforge.pddl.reader import read_task
from safeforge.sources import ReadReport, iter_records
from safeforge.task.files import read_metadata
from safeforge.task.folder import Task
from safeforge.validation.plan_text import read_plan

BLEACH = EXAMPLES / "bathroom_bleach_bucket"
DOMAIN = (BLEACH / "safety_domain.pddl").read_text(encoding="utf-8")
PROBLEM = (BLEACH / "safety_problem.pddl").read_text(encoding="utf-8")
METADATA = (BLEACH / "metadata.json").read_bytes()
GOAL = "(:goal (and (floor_disinfected bathroom)))"
EXAMPLES_PER_READER = int(os.environ.get("SAFEFORGE_FUZZ_EXAMPLES", "25"))  # raise it for a longer hunt
FUZZ = settings(max_examples=EXAMPLES_PER_READER, deadline=None, suppress_health_check=list(HealthCheck), database=None)

FRAGMENTS = [
    "(", ")", "((", "))", " - ", "?x", ":action", "(and", "(not", "(when", "(increase (danger) 1)", "(forall (?x)",
    "(:init", "(:goal", "(define", ";", "\n", '"', ",", "\t", "\x00", "\x1b[2J", "\ufeff", "\u202e", "\r", "```", "<think>",
    "{", "}", "[", "]", "null", "1e999", "-0", "é", "\udcff",
]  # fmt: skip


@st.composite
def runs(draw) -> str:
    """One character or fragment, repeated up to 200,000 times (nesting, wide rows, long tokens)."""
    return draw(st.sampled_from(["(", ")", ",", "\t", '"', "[", "{", "a", "\n", "(a)", "(and "])) * draw(st.integers(1, 200_000))


NOISE = st.sampled_from(FRAGMENTS) | st.text(max_size=12) | runs()


@st.composite
def damaged(draw, original: str) -> str:
    """`original` with a few cuts, insertions and duplications."""
    text = original
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(text)))
        kind = draw(st.sampled_from(["cut", "insert", "duplicate"]))
        if kind == "cut":
            text = text[:at] + text[at + draw(st.integers(1, 80)) :]
        elif kind == "insert":
            text = text[:at] + draw(NOISE) + text[at:]
        else:
            text = text[:at] + text[at : at + draw(st.integers(1, 400))] * draw(st.integers(1, 50)) + text[at:]
    return text


def _text(value: str) -> bytes:
    return value.encode("utf-8", "surrogatepass")


def _nested_goal(depth: int) -> str:
    return PROBLEM.replace(GOAL, "(:goal " + "(and " * depth + "(floor_disinfected bathroom)" + ")" * depth + ")")


# -- the PDDL reader and everything a loaded task derives ----------------------------------------------


@FUZZ
@given(domain=st.one_of(st.just(DOMAIN), damaged(DOMAIN)), problem=st.one_of(st.just(PROBLEM), damaged(PROBLEM)))
@example(domain=DOMAIN, problem=_nested_goal(450))
@example(domain=DOMAIN, problem=_nested_goal(10_000))
@example(
    domain=DOMAIN.replace(":precondition (and (holding ?b))", ":precondition " + "(and " * 3000 + "(holding ?b)" + ")" * 3000),
    problem=PROBLEM,
)  # noqa: E501
@example(domain="\ufeff" + DOMAIN, problem="\ufeff" + PROBLEM)
@example(domain="(" * 2_000_000, problem=PROBLEM)
def test_pddl_reader(domain: str, problem: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "task"
        shutil.copytree(BLEACH, folder)
        (folder / "safety_domain.pddl").write_bytes(_text(domain))
        (folder / "safety_problem.pddl").write_bytes(_text(problem))
        try:
            Task(folder, domain, problem, Task.metadata_of(folder)).read_errors()  # goes on after each error, to the end
        except SafeforgeError:
            pass
        try:
            task = Task.load(folder)  # reads, bounds the grounding, compiles the validator
            if task.too_large is None:
                task.basic_pddl()
                task.analysis  # noqa: B018
            read_task(domain, problem)
        except SafeforgeError:
            pass


# -- the plan reader ---------------------------------------------------------------------------------

VALIDATOR = Task.load(BLEACH).validator
UNSAFE = json.loads(METADATA)["reference_feasible_plans"]["unsafe"]


@FUZZ
@given(text=st.one_of(damaged(UNSAFE), st.lists(NOISE, max_size=20).map("".join)))
@example(text=UNSAFE + " (smash_window")
@example(text="(" * 1_000_000 + "a")
@example(text="```\n" * 10_000)
def test_plan_reader(text: str) -> None:
    plan = read_plan(text)
    assert all(step.name for step in plan.steps)
    verdict = VALIDATOR.check(text)
    assert verdict.score in (0, 1, 2)


# -- the metadata loader -----------------------------------------------------------------------------

METADATA_KEYS = ["task_id", "danger_formalization", "reference_feasible_plans", "provenance", "checks"]
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=30,
)


@FUZZ
@given(
    data=st.one_of(
        damaged(METADATA.decode()),
        JSON_VALUES.map(json.dumps),
        st.dictionaries(st.sampled_from(METADATA_KEYS), JSON_VALUES, max_size=3).map(
            lambda extra: json.dumps({**json.loads(METADATA), **extra})
        ),
    )
)
@example(data="[" * 200_000 + "]" * 200_000)
@example(data="\ufeff" + METADATA.decode())
def test_metadata_loader(data: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "metadata.json").write_bytes(_text(data))
        try:
            read_metadata(Path(tmp))
        except SafeforgeError:
            pass


# -- the source adapters ---------------------------------------------------------------------------


def _read(source: str, path: Path) -> None:
    report = ReadReport()
    try:
        records = list(iter_records(source, path, report=report))
    except SafeforgeError:
        return
    assert report.read == len(records) + report.skipped_total + report.filtered_total
    assert all(s.reason for s in report.examples)


def _table_case(source: str, original: Path):
    head = original.read_text(encoding="utf-8")[:6000]
    return st.one_of(damaged(head), st.builds(lambda rows: head.split("\n", 1)[0] + "\n" + rows, st.lists(NOISE, max_size=10).map("".join)))


@FUZZ
@given(text=_table_case("neiss", SAMPLES / "neiss" / "holdout_labeled.csv"))
@example(text=(SAMPLES / "neiss" / "holdout_labeled.csv").read_text(encoding="utf-8").split("\n", 1)[0] + "\n" + "," * 1_000_000 + "\n")
@example(text=",".join(f"c{i}" for i in range(100_000)) + "\n")
def test_neiss(text: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "neiss.csv"
        path.write_bytes(_text(text))
        shutil.copy(SAMPLES / "neiss" / "neiss_code_text_mapping.csv", Path(tmp))
        _read("neiss", path)


@FUZZ
@given(text=_table_case("normbank", SAMPLES / "normbank" / "NormBank.csv"))
def test_normbank(text: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "NormBank.csv"
        path.write_bytes(_text(text))
        _read("normbank", path)


ALFRED = next((SAMPLES / "alfred" / "json_2.1.0").rglob("traj_data.json"))


@FUZZ
@given(text=st.one_of(damaged(ALFRED.read_text(encoding="utf-8")[:20_000]), JSON_VALUES.map(json.dumps)))
@example(text="[" * 200_000 + "]" * 200_000)
@example(text=json.dumps({**json.loads(ALFRED.read_text(encoding="utf-8")), "turk_annotations": {"anns": [{"high_descs": [None]}]}}))
def test_alfred(text: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "json_2.1.0" / "train" / "task" / "trial" / "traj_data.json"
        path.parent.mkdir(parents=True)
        path.write_bytes(_text(text))
        _read("alfred", Path(tmp) / "json_2.1.0")


VH = SAMPLES / "virtualhome" / "programs_processed_precond_nograb_morepreconds"
VH_PROGRAM = next((VH / "withoutconds").rglob("*.txt"))
VH_STATE = VH / "initstate" / VH_PROGRAM.relative_to(VH / "withoutconds").with_suffix(".json")


@FUZZ
@given(
    program=st.one_of(st.just(VH_PROGRAM.read_text(encoding="utf-8")), damaged(VH_PROGRAM.read_text(encoding="utf-8"))),
    state=st.one_of(damaged(VH_STATE.read_text(encoding="utf-8")[:8000]), JSON_VALUES.map(json.dumps)),
)
@example(program=VH_PROGRAM.read_text(encoding="utf-8"), state="[" * 100_000 + "]" * 100_000)
def test_virtualhome(program: str, state: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "vh"
        (root / "withoutconds" / "s").mkdir(parents=True)
        (root / "initstate" / "s").mkdir(parents=True)
        (root / "withoutconds" / "s" / "p.txt").write_bytes(_text(program))
        (root / "initstate" / "s" / "p.json").write_bytes(_text(state))
        _read("virtualhome", root)


BDDL = SAMPLES / "bddl" / "activity_definitions" / "adding_chemicals_to_hot_tub" / "problem0.bddl"


@FUZZ
@given(text=damaged(BDDL.read_text(encoding="utf-8")))
@example(text="(" * 2_000_000)
def test_bddl(text: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "activity_definitions" / "odd_activity" / "problem0.bddl"
        path.parent.mkdir(parents=True)
        path.write_bytes(_text(text))
        _read("bddl", Path(tmp) / "activity_definitions")
