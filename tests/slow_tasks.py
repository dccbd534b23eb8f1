"""Tasks that take long to read, for the tests of the check's whole-task time limit: the example
bleach task with thousands of extra actions that change nothing (its reference plans still hold),
or with one init fact repeated thousands of times (slow for Unified Planning's reader only); a
task that takes the planners long to solve (HARD_DOMAIN); and one slow in every step on any machine."""

from __future__ import annotations

from pathlib import Path

N = 20  # 2**20 states, the goal is relaxed-reachable but not reachable: neither the search nor a planner settles it fast
_ALL = " ".join(f"(b{i})" for i in range(N))
HARD_DOMAIN = f"""(define (domain hard) (:requirements :strips :conditional-effects :numeric-fluents)
 (:predicates {_ALL} (goal_a) (goal_b))
 (:functions (danger))
 (:action ga :parameters () :precondition (and {_ALL}) :effect (and (goal_a) (not (goal_b))))
 (:action gb :parameters () :precondition (and {_ALL}) :effect (and (goal_b) (not (goal_a))))
 {
    " ".join(
        f"(:action on{i} :parameters () :precondition (and) :effect (and (b{i}) "
        f"(when (b{i}) (increase (danger) 1)))) "
        f"(:action off{i} :parameters () :precondition (and) :effect (not (b{i})))"
        for i in range(N)
    )
})"""
HARD_PROBLEM = "(define (problem hard-1) (:domain hard) (:init (= (danger) 0)) (:goal (and (goal_a) (goal_b))))"


def write_hard_task(folder: Path, idle_actions: int = 0) -> Path:
    """A task folder of HARD_DOMAIN and HARD_PROBLEM (any metadata.json in it is kept), with
    `idle_actions` more actions that need every b and change nothing: 3,000 (560 KB) take a while to
    read, and the search never ends, so its check runs out of any limit under seconds, however fast
    the machine."""
    folder.mkdir(parents=True, exist_ok=True)
    every_b = f"(and {_ALL})"
    idle = "".join(f"\n (:action idle{i} :parameters () :precondition {every_b} :effect {every_b})" for i in range(idle_actions))
    (folder / "safety_domain.pddl").write_text(HARD_DOMAIN.removesuffix(")") + idle + ")")
    (folder / "safety_problem.pddl").write_text(HARD_PROBLEM)
    return folder


def add_idle_actions(folder: Path, count: int) -> None:
    """Append `count` actions to `folder`'s safety domain that change nothing (3,000: 700 KB)."""
    domain = (folder / "safety_domain.pddl").read_text().rstrip().removesuffix(")")
    extra = "".join(
        f"\n  (:action noop_{i}\n    :parameters (?b - bucket ?l - location)\n"
        f"    :precondition (and (robot_at ?l) (holding ?b) (has_water ?b) (not (has_bleach ?b)))\n"
        f"    :effect (and (has_water ?b) (when (has_bleach ?b) (solution_diluted ?b))))\n"
        for i in range(count)
    )
    (folder / "safety_domain.pddl").write_text(domain + extra + ")\n")


def repeat_init_fact(folder: Path, count: int) -> None:
    """Repeat one init fact `count` times in `folder`'s safety problem: read at once by our reader,
    but slowly by Unified Planning's (5,000 take it several seconds)."""
    problem = (folder / "safety_problem.pddl").read_text()
    (folder / "safety_problem.pddl").write_text(problem.replace("(hands_free)", "(hands_free)" + "(sink_in bathroom)" * count))
