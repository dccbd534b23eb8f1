"""Our own reader of the task PDDL: what it refuses (named, with the line), and that scoring never
needs Unified Planning."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from tests_paths import EXAMPLES, REPO

from safeforge.pddl.errors import PDDLError
from safeforge.pddl.reader import read_all, read_task

DOMAIN = (EXAMPLES / "bathroom_bleach_bucket" / "safety_domain.pddl").read_text()
PROBLEM = (EXAMPLES / "bathroom_bleach_bucket" / "safety_problem.pddl").read_text()


def _line_of(text: str, needle: str) -> int:
    return next(number for number, line in enumerate(text.splitlines(), 1) if needle in line)


D, P = DOMAIN, PROBLEM
REFUSED = [
    (D.replace(":numeric-fluents", ":numeric-fluents :magic"), P, "domain", "unknown requirement :magic", ":requirements"),
    (D.replace(":numeric-fluents", ":durative-actions"), P, "domain", "requirement :durative-actions is not supported", ":requirements"),
    (D.replace("(:action go_to", "(:durative-action go_to"), P, "domain", ":durative-action is not supported", "(:durative"),
    (D.replace("(:action go_to", "(:derived (x) (y))\n  (:action go_to"), P, "domain", ":derived is not supported", "(:derived"),
    (D, P.replace("(:domain bathroom_bleach_bucket)", "(:domain kitchen)"), "problem", "the problem is for domain 'kitchen'", "(:domain"),
    (D, P.replace("(:goal (and (floor_disinfected bathroom)))", ""), "problem", "the problem has no :goal", "(define"),
]


@pytest.mark.parametrize("domain, problem, file, message, needle", REFUSED)
def test_what_the_reader_refuses_is_named_with_file_and_line(domain, problem, file, message, needle):
    with pytest.raises(PDDLError) as caught:
        read_task(domain, problem, "domain.pddl", "problem.pddl")
    assert caught.value.file == f"{file}.pddl"
    assert message in caught.value.message
    assert caught.value.line == _line_of(domain if file == "domain" else problem, needle)


def test_task_validate_and_a_check_of_stored_plans_never_import_unified_planning():
    code = (
        "import runpy, sys\n"
        "sys.argv = ['safeforge', 'task', 'validate', sys.argv[1], '--plan', '(go_to bathroom utility_closet)']\n"
        "try:\n"
        "    runpy.run_module('safeforge.cli', run_name='__main__')\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith(('unified_planning', 'scipy'))))\n"
    )
    done = subprocess.run([sys.executable, "-c", code, str(EXAMPLES / "bathroom_bleach_bucket")], capture_output=True, text=True,
                          cwd=REPO, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Score: 0" in done.stdout
    assert done.stdout.strip().splitlines()[-1] == "[]"


def _errors(domain: str, problem: str) -> list[tuple[str, int | None, int | None, str]]:
    reading = read_all(domain, problem, "domain.pddl", "problem.pddl")
    return [(e.file, e.line, e.column, e.message) for e in reading.errors]


def test_every_syntax_error_is_found_each_in_its_section_with_line_and_column():
    domain = D.replace("(:action go_to", "(:action go_to :cost 1", 1)  # a section's error
    domain = domain.replace(":requirements", ":requirements :magic", 1)
    problem = P.replace("(:goal (and (floor_disinfected bathroom)))", "(:goal (and (floor_disinfected bathroom))")  # a ')' missing
    found = _errors(domain, problem)
    assert [(file, line) for file, line, _, _ in found] == [
        ("domain.pddl", _line_of(domain, ":requirements")),
        ("domain.pddl", _line_of(domain, "(:action go_to")),
        ("problem.pddl", _line_of(problem, "(:goal")),
    ]
    assert "unknown requirement :magic" in found[0][3] and "found :cost" in found[1][3]
    goal_line = problem.splitlines()[found[2][1] - 1]
    assert found[2][2] == goal_line.index("(:goal") + 1 and "never closed" in found[2][3]


def test_unbalanced_sections_are_skipped_and_the_rest_still_reads():
    domain = D.replace("(:action go_to\n", "(:action go_twice :parameters (?r - location)\n  (:action go_to\n", 1)  # never closed
    domain = domain.replace(":parameters (?b - bucket)\n", ":parameters (?b - bucket))\n", 1)  # a ')' too many in add_bleach
    found = _errors(domain, P)
    assert [line for _, line, _, _ in found] == [_line_of(domain, "(:action go_twice"), _line_of(domain, ":parameters (?b - bucket))")]
    assert "probably never closed" in found[0][3] and "a ')' too many" in found[1][3]
    assert found[1][2] == domain.splitlines()[found[1][1] - 1].index("))") + 2  # the ')' too many itself
    reading = read_all(domain, P, "domain.pddl", "problem.pddl")
    assert set(read_task(D, P).actions) - set(reading.task.actions) == {"add_bleach"}  # dropped; the others read
    assert reading.declarations_read and reading.task.goal is not None


def test_names_undeclared_in_the_parts_that_read_are_each_found():
    from safeforge.validation.simulator import Simulator

    domain = D.replace("(:action go_to", "(:action go_to :cost 1", 1)
    problem = P.replace("(:goal (and (floor_disinfected bathroom)))", "(:goal (and (floor_disinfected attic)))")
    reading = read_all(domain, problem, "domain.pddl", "problem.pddl")
    assert len(reading.errors) == 1 and reading.declarations_read
    (undeclared,) = Simulator.errors(reading.task)
    assert undeclared.message == "undeclared object or constant attic" and undeclared.line == _line_of(problem, "(:goal")


def test_a_task_reports_its_syntax_errors_and_the_undeclared_names_of_the_parts_that_read(tmp_path):
    from safeforge.task.folder import Task

    domain = D.replace("(:action go_to\n", "(:action go_twice :parameters (?r - location)\n  (:action go_to\n", 1)  # never closed
    domain = domain.replace("(has_bleach ?b)", "(has_bleech ?b)", 1)  # an undeclared predicate in add_bleach
    problem = P.replace("(:goal (and (floor_disinfected bathroom)))", "(:goal (and (floor_disinfected attic)))")
    task = Task(tmp_path, domain, problem, Task.metadata_of(EXAMPLES / "bathroom_bleach_bucket"))
    found = [(Path(e.file).name, e.line, e.message.split(" (")[0]) for e in task.read_errors()]
    opened = _line_of(domain, "(:action go_twice")
    assert found == [
        ("safety_domain.pddl", opened, f"unbalanced parentheses: the '(' on line {opened} is probably never closed"),
        ("safety_domain.pddl", _line_of(domain, "(has_bleech"), "undeclared predicate has_bleech"),
        ("safety_problem.pddl", _line_of(problem, "(:goal"), "undeclared object or constant attic"),
    ]
