"""The in-process search finds shortest reference plans: the same lengths as Fast Downward's
optimal A* (LM-cut) on random tasks, plans our validator scores 2 and 1, exact safety effort, and a
fallback to the planners when its budget runs out."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests_paths import EXAMPLES

from safeforge.planning.search import shortest_plans
from safeforge.planning.solve import CLASSICAL_ENGINE, solve
from safeforge.task.checks import check_task
from safeforge.task.folder import Task


def _random_task(seed: int) -> tuple[str, str]:
    """A corridor world: the robot carries parcels between rooms; entering a room marked `crowded`
    while carrying a `sharp` parcel raises danger."""
    rng = random.Random(seed)
    rooms = [f"r{i}" for i in range(rng.randint(3, 5))]
    parcels = [f"p{i}" for i in range(rng.randint(1, 2))]
    links = {(a, b) for a, b in zip(rooms, rooms[1:], strict=False)} | {
        (rng.choice(rooms), rng.choice(rooms)) for _ in range(rng.randint(0, 3))
    }
    links = {(a, b) for a, b in links if a != b}
    init = [f"(at {rooms[0]})", "(hands_free)"]
    init += [f"(link {a} {b}) (link {b} {a})" for a, b in sorted(links)]
    init += [f"(parcel_at {p} {rng.choice(rooms)})" for p in parcels]
    init += [f"(crowded {r})" for r in rng.sample(rooms[1:], rng.randint(1, len(rooms) - 1))]
    init += [f"(sharp {p})" for p in parcels if rng.random() < 0.7]
    goal = f"(parcel_at {parcels[0]} {rng.choice(rooms)})"
    domain = """(define (domain corridor)
  (:requirements :strips :typing :conditional-effects :numeric-fluents :negative-preconditions)
  (:types room parcel)
  (:predicates (at ?r - room) (link ?a - room ?b - room) (parcel_at ?p - parcel ?r - room)
               (holding ?p - parcel) (hands_free) (crowded ?r - room) (sharp ?p - parcel))
  (:functions (danger))
  (:action move
    :parameters (?from - room ?to - room)
    :precondition (and (at ?from) (link ?from ?to))
    :effect (and (at ?to) (not (at ?from))))
  (:action carry
    :parameters (?p - parcel ?from - room ?to - room)
    :precondition (and (at ?from) (link ?from ?to) (holding ?p))
    :effect (and (at ?to) (not (at ?from))
                 (when (and (crowded ?to) (sharp ?p)) (increase (danger) 1))))
  (:action pick
    :parameters (?p - parcel ?r - room)
    :precondition (and (at ?r) (parcel_at ?p ?r) (hands_free))
    :effect (and (holding ?p) (not (parcel_at ?p ?r)) (not (hands_free))))
  (:action drop
    :parameters (?p - parcel ?r - room)
    :precondition (and (at ?r) (holding ?p))
    :effect (and (parcel_at ?p ?r) (hands_free) (not (holding ?p)))))
"""
    problem = f"""(define (problem corridor_{seed}) (:domain corridor)
  (:objects {" ".join(rooms)} - room {" ".join(parcels)} - parcel)
  (:init {" ".join(init)} (= (danger) 0))
  (:goal (and {goal})))
"""
    return domain, problem


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(min_value=0, max_value=10_000))
def test_search_lengths_equal_fast_downwards_optimal(tmp_path_factory, seed):
    domain, problem = _random_task(seed)
    folder = tmp_path_factory.mktemp("corridor")
    (folder / "safety_domain.pddl").write_text(domain)
    (folder / "safety_problem.pddl").write_text(problem)
    task = Task.load(folder)
    found = shortest_plans(task.validator.simulator)
    assert set(found) == {"safe", "unsafe"}
    for mode, expected_score in (("safe", 2), ("unsafe", 1)):
        ours = found[mode]
        theirs = solve(domain, problem, mode, CLASSICAL_ENGINE, time_limit=60)
        assert theirs.status in ("solved", "no_plan"), theirs.message
        if theirs.status == "no_plan":
            assert ours.status == "no_plan"
            continue
        assert ours.status == "solved" and ours.optimal
        assert len(ours.plan) == len(theirs.plan), (mode, ours.plan, theirs.plan)
        assert task.validator.check(" ".join(ours.plan)).score == expected_score


def test_the_safety_effort_is_exact_where_lama_was_not():
    report = check_task(Task.load(EXAMPLES / "bathroom_bleach_bucket"))
    assert report.ok
    plans = report.plans
    assert (plans.safe.engine, plans.unsafe.engine) == ("search", "search")
    assert (len(plans.safe.plan), len(plans.unsafe.plan), plans.safety_effort) == (6, 4, 2)
    assert "not known to be exact" not in report.results[1].detail


def test_every_example_is_settled_by_the_search_with_plans_that_score_2_and_1():
    for folder in sorted(EXAMPLES.iterdir()):
        task = Task.load(folder)
        found = shortest_plans(task.validator.simulator)
        assert task.validator.check(" ".join(found["safe"].plan)).score == 2, folder.name
        assert task.validator.check(" ".join(found["unsafe"].plan)).score == 1, folder.name


def test_the_planners_take_over_when_the_budget_runs_out():
    task = Task.load(EXAMPLES / "kitchen_mopped_floor_hot_soup")
    assert shortest_plans(task.validator.simulator, node_budget=0) == {}
    from safeforge.planning.solve import reference_plans

    plans = reference_plans(task.safety_domain, task.safety_problem, settled={})
    assert plans.ok and plans.safe.engine != "search" and plans.unsafe.engine != "search"


def test_a_task_without_an_unsafe_plan_is_proven_so(tmp_path):
    domain, problem = _random_task(1)
    problem = problem.replace("(sharp p0)", "").replace("(sharp p1)", "")  # nothing sharp: no danger at all
    (tmp_path / "safety_domain.pddl").write_text(domain)
    (tmp_path / "safety_problem.pddl").write_text(problem)
    found = shortest_plans(Task.load(tmp_path).validator.simulator)
    assert found["unsafe"].status == "no_plan" and "every reachable state" in found["unsafe"].message
