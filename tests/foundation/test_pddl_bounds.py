"""A task's grounding is estimated from its text before anything enumerates it: an oversized task
is refused with a message a generator can act on, never a hang or a blow-up of memory."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from tests_paths import EXAMPLES, REPO

from safeforge.common.limits import DEFAULT_LIMITS
from safeforge.generation import check_candidate
from safeforge.pddl.bounds import grounding_size, too_large
from safeforge.task.folder import Task

SAFEFORGE = [sys.executable, "-m", "safeforge.cli"]
LIMITED = (
    "import resource, runpy, sys; resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30)); "
    "sys.argv = ['safeforge', *sys.argv[1:]]; runpy.run_module('safeforge.cli', run_name='__main__')"
)

WIDE_PREDICATE = "(linked ?a ?b ?c ?d ?e ?f - item)"


def _oversized(tmp_path: Path, objects: int = 30) -> Path:
    """The bleach-bucket example plus one 6-ary predicate over `objects` objects."""
    folder = tmp_path / "oversized"
    shutil.copytree(EXAMPLES / "bathroom_bleach_bucket", folder)
    domain = (folder / "safety_domain.pddl").read_text()
    domain = domain.replace("(:types location bucket)", "(:types location bucket item)")
    domain = domain.replace("(hands_free)\n", f"(hands_free)\n    {WIDE_PREDICATE}\n", 1)
    (folder / "safety_domain.pddl").write_text(domain)
    problem = (folder / "safety_problem.pddl").read_text()
    items = " ".join(f"item{i}" for i in range(objects))
    problem = problem.replace("red_bucket blue_bucket - bucket)", f"red_bucket blue_bucket - bucket\n    {items} - item)")
    (folder / "safety_problem.pddl").write_text(problem)
    return folder


def _run_limited(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", LIMITED, *args], capture_output=True, text=True, timeout=120, cwd=REPO)


def test_the_grounding_is_counted_per_type_from_the_text():
    task = Task.load(EXAMPLES / "bathroom_bleach_bucket")
    size = grounding_size(task.safety_domain, task.safety_problem)
    # 2 locations, 2 buckets: unary over location 3x2, over bucket 5x2; binary 2x2 twice; (hands_free), (danger)
    assert size.facts == 3 * 2 + 5 * 2 + 2 * 2 + 2 * 2 + 1 + 1
    assert size.ground_actions > 0 and too_large(size) is None
    wide = grounding_size(
        task.safety_domain.replace("(hands_free)", f"(hands_free) {WIDE_PREDICATE}"),
        task.safety_problem.replace("- bucket)", "- bucket a b c d e f g h i j - item)"),
    )
    assert wide.facts == size.facts + 10**6 and wide.largest_fact == "linked"
    assert "the problem grounds to 1,000,0" in too_large(wide)


def test_task_check_refuses_an_oversized_task_at_once_with_what_to_change(tmp_path):
    folder = _oversized(tmp_path)
    done = _run_limited("task", "check", str(folder))
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert "the problem grounds to 729,000,0" in done.stdout + done.stderr
    assert f"the limit is {DEFAULT_LIMITS.ground_facts:,}" in done.stderr and "keep predicates at most 3-ary" in done.stderr
    assert not (folder / "domain.pddl").read_text().count("linked")  # nothing was derived from it


@pytest.mark.parametrize("command", [["task", "validate", "{}", "--plan", "(go_to bathroom utility_closet)"], ["task", "prompt", "{}"]])
def test_validate_and_prompt_end_with_a_clear_error_within_bounded_memory(tmp_path, command):
    folder = _oversized(tmp_path)
    done = _run_limited(*(part.format(folder) for part in command))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "grounds to 729,000,0" in done.stderr and "safety_problem.pddl" in done.stderr


def test_the_generator_gets_the_size_as_feedback(tmp_path):
    report = check_candidate(_oversized(tmp_path, objects=12))
    [failed] = report.failed
    assert failed.name == "structure" and "grounds to 2,986,010" in failed.detail and "at most 3-ary" in failed.detail


def test_many_objects_in_unary_facts_load_and_validate(tmp_path):
    folder = tmp_path / "crowded"
    shutil.copytree(EXAMPLES / "bathroom_bleach_bucket", folder)
    domain = (folder / "safety_domain.pddl").read_text().replace("(:types location bucket)", "(:types location bucket item)")
    (folder / "safety_domain.pddl").write_text(domain.replace("(hands_free)\n", "(hands_free)\n    (spare ?i - item)\n", 1))
    items = [f"item{i}" for i in range(5000)]
    problem = (folder / "safety_problem.pddl").read_text()
    problem = problem.replace("red_bucket blue_bucket - bucket)", f"red_bucket blue_bucket - bucket\n    {' '.join(items)} - item)")
    (folder / "safety_problem.pddl").write_text(problem.replace("(hands_free)", "(hands_free) " + " ".join(f"(spare {i})" for i in items)))
    task = Task.load(folder)
    assert task.too_large is None
    plan = task.metadata.reference_feasible_plans.unsafe
    assert task.validator.check(plan).score == 1
    assert ("spare", "item4999") in task.validator.simulator.initial.atoms
