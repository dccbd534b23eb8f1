"""The execution check of a candidate folder: failures are reports (never exceptions) whose
messages name the file and line without local paths, and feedback carries the evidence."""

from __future__ import annotations

import shutil

from tests_paths import TEMPLATE

from safeforge.generation import GeneratedPDDL, check_candidate, check_problems
from safeforge.task.checks import CheckReport, CheckResult


def candidate(tmp_path, domain: str | None = None, problem: str | None = None):
    folder = tmp_path / "deep" / "work" / "round-1"
    shutil.copytree(TEMPLATE, folder)
    for name, text in (("safety_domain.pddl", domain), ("safety_problem.pddl", problem)):
        path = folder / name
        path.write_text((text if text is not None else path.read_text()).replace("__NAME__", "t"))
    return folder


def test_a_missing_file_is_a_failed_parse_check_without_local_paths(tmp_path):
    folder = candidate(tmp_path)
    (folder / "safety_problem.pddl").unlink()
    report = check_candidate(folder)
    assert not report.ok and [r.name for r in report.results] == ["parse"]
    assert report.results[0].detail == "safety_problem.pddl: file is missing"


def test_a_syntax_error_names_file_and_line_and_feedback_quotes_it(tmp_path):
    domain = (TEMPLATE / "safety_domain.pddl").read_text().replace("(:action put_down", "(:action put_down ()", 1)
    folder = candidate(tmp_path, domain=domain)
    report = check_candidate(folder)
    (failed,) = report.failed
    assert failed.name == "parse" and failed.detail.startswith(
        "safety_domain.pddl:29: action put_down: expected :parameters, :precondition or :effect, found ()"
    )
    assert str(tmp_path) not in failed.detail
    pddl = GeneratedPDDL(safety_domain=domain.replace("__NAME__", "t"), safety_problem=(TEMPLATE / "safety_problem.pddl").read_text())
    (problem,) = check_problems(report, pddl)
    assert problem.startswith("The PDDL does not parse: safety_domain.pddl:29: ")
    assert problem.endswith("Line 29 of safety_domain.pddl reads: (:action put_down ()")


def test_a_missing_parenthesis_is_reported_where_its_group_opens(tmp_path):
    domain = (TEMPLATE / "safety_domain.pddl").read_text().replace("(:action put_down", "(:action put_down (", 1)
    report = check_candidate(candidate(tmp_path, domain=domain))
    (failed,) = report.failed
    assert failed.detail.startswith("safety_domain.pddl:29: unbalanced parentheses: the '(' on line 29 is probably never closed")
    assert "the text ends on line" in failed.detail


def test_a_structural_failure_is_reported_with_the_checks_that_passed():
    report = CheckReport(
        "t",
        [
            CheckResult("parse", True, "parse"),
            CheckResult("structure", False, "action put_down: (danger) is increased unconditionally; wrap it in (when <condition> ...)"),
        ],
    )
    pddl = GeneratedPDDL(safety_domain="(define (domain t))", safety_problem="(define (problem p))")
    assert check_problems(report, pddl) == [
        "Check 'structure' failed: action put_down: (danger) is increased unconditionally; wrap it in (when <condition> ...)",
        "Checks that passed: parse.",
    ]
