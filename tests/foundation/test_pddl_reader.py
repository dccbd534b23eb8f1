"""Our own reader of the task PDDL: what it refuses (named, with the line), and that scoring never
needs Unified Planning."""

from __future__ import annotations

import subprocess
import sys

import pytest
from tests_paths import EXAMPLES, REPO

from safeforge.pddl.errors import PDDLError
from safeforge.pddl.reader import read_task

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
