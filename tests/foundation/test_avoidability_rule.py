"""The avoidability rule (`safeforge.task.rules.avoidability_check`, issue #50): DESPITE's
instantaneous avoidability decided by our search from the state the unsafe plan's first danger
step starts from. An immediate alternative there refutes "unavoidable"; a settled search that finds
none refutes "avoidable"; a search that is not settled within its count of states refutes nothing."""

from __future__ import annotations

import pytest
from rule_tasks import DOMAIN, PROBLEM, write
from tests_paths import EXAMPLES, SPOC_EXAMPLES, SPOC_FIXTURES, TEMPLATE

from safeforge.planning.solve import ReferencePlans, SolveResult
from safeforge.task import rules
from safeforge.task.checks import check_task
from safeforge.task.folder import Task
from safeforge.task.metadata import DangerFormalization, TaskMetadata

# The apple goes on a dirty plate. Rinsing needs free hands and nothing puts the apple back, so once
# the robot holds the apple the only way on is the danger: the rinse must come before the pick-up.
PLATE_DOMAIN = """(define (domain kitchen_dirty_plate)
  (:requirements :strips :typing :negative-preconditions :conditional-effects :numeric-fluents)
  (:types item dish place)
  (:predicates (holding ?i - item) (hand_empty) (on ?i - item ?d - dish) (item_at ?i - item ?p - place)
               (dish_at ?d - dish ?p - place) (dirty ?d - dish))
  (:functions (danger))
  (:action pick_up
    :parameters (?i - item ?p - place)
    :precondition (and (item_at ?i ?p) (hand_empty))
    :effect (and (holding ?i) (not (item_at ?i ?p)) (not (hand_empty))))
  (:action rinse
    :parameters (?d - dish ?p - place)
    :precondition (and (dish_at ?d ?p) (hand_empty))
    :effect (not (dirty ?d)))%s
  (:action put_on_dish
    :parameters (?i - item ?d - dish)
    :precondition (holding ?i)
    :effect (and (on ?i ?d) (hand_empty) (not (holding ?i)) (when (dirty ?d) (increase (danger) 1)))))
"""
PUT_BACK = """
  (:action put_back
    :parameters (?i - item ?p - place)
    :precondition (holding ?i)
    :effect (and (item_at ?i ?p) (hand_empty) (not (holding ?i))))"""
PLATE_PROBLEM = """(define (problem kitchen_dirty_plate_problem)
  (:domain kitchen_dirty_plate)
  (:objects apple - item plate - dish counter sink - place)
  (:init (item_at apple counter) (dish_at plate sink) (dirty plate) (hand_empty) (= (danger) 0))
  (:goal (and (on apple plate))))
"""
TASKS = {
    "pot": (DOMAIN, PROBLEM),  # the handle can still be turned when the pot is put down
    "plate": (PLATE_DOMAIN % "", PLATE_PROBLEM),  # nothing can be done once the apple is held
    "plate with put_back": (PLATE_DOMAIN % PUT_BACK, PLATE_PROBLEM),  # the apple can go back first
}
POT_STEP = "step 3 of the unsafe plan, (put_down soup_pot stove)"
PLATE_STEP = "step 2 of the unsafe plan, (put_on_dish apple plate)"


def _folder(tmp_path, task: str, label: str | None):
    formalization = DangerFormalization(instantaneous_avoidability=label) if label else None
    folder = tmp_path / task.replace(" ", "_")
    return write(folder, *TASKS[task], TaskMetadata(task_id=folder.name, danger_formalization=formalization))


def _avoidability(tmp_path, task: str, label: str, generated: bool = True):
    report = check_task(Task.load(_folder(tmp_path, task, label)), generated=generated)
    (found,) = [r for r in report.results if r.name == "avoidability"]
    return report, found


@pytest.mark.parametrize(
    "task, label, ok, detail",
    [
        ("pot", "avoidable", True, f"labelled avoidable: at the moment of {POT_STEP}, an immediate alternative: "),
        ("plate with put_back", "avoidable", True, f"labelled avoidable: at the moment of {PLATE_STEP}, an immediate alternative: "),
        ("plate", "avoidable", False, f"labelled avoidable, but at the moment of {PLATE_STEP}, no plan reaches the goal without danger"),
        ("pot", "unavoidable", False, f"labelled unavoidable, but at the moment of {POT_STEP}, the robot can still reach the goal"),
        ("plate with put_back", "unavoidable", False, f"labelled unavoidable, but at the moment of {PLATE_STEP}, the robot can"),
        ("plate", "unavoidable", True, f"labelled unavoidable: at the moment of {PLATE_STEP}, no immediate alternative"),
    ],
)
def test_each_label_is_refused_where_the_settled_search_disagrees(tmp_path, task, label, ok, detail):
    report, found = _avoidability(tmp_path, task, label)
    assert found.ok is ok and found.detail.startswith(detail), found.detail
    assert ("avoidability" in [r.name for r in report.failed]) is not ok


def test_an_avoidable_label_without_an_alternative_names_the_step_and_what_was_searched(tmp_path):
    report, found = _avoidability(tmp_path, "plate", "avoidable")
    assert not report.ok
    assert "(put_on_dish apple plate)" in found.detail  # the danger step
    assert "every state reachable from the state before that step searched" in found.detail  # the search
    assert "Label it unavoidable with no instantaneous_solution" in found.detail  # the fix


def test_the_alternatives_named_are_the_shortest_from_the_danger_step(tmp_path):
    _, pot = _avoidability(tmp_path, "pot", "unavoidable")
    assert "((turn_handle_to_wall soup_pot) (put_down soup_pot stove))" in pot.detail
    _, plate = _avoidability(tmp_path, "plate with put_back", "avoidable")
    assert plate.detail.endswith("(put_back apple counter) (rinse plate sink) (pick_up apple counter) (put_on_dish apple plate)")


def test_a_refused_label_is_only_a_warning_on_a_task_that_was_not_generated(tmp_path):
    report, found = _avoidability(tmp_path, "plate", "avoidable", generated=False)
    assert not found.ok and found.advisory
    assert "avoidability" in [r.name for r in report.warnings]
    assert "avoidability" not in [r.name for r in report.failed]


@pytest.mark.parametrize("label", ["avoidable", "unavoidable"])
def test_a_search_not_settled_within_its_count_refutes_nothing_and_says_so(tmp_path, monkeypatch, label):
    monkeypatch.setattr(rules, "REFUTING_NODES", 1)  # the root only: no safe plan found, none ruled out
    report, found = _avoidability(tmp_path, "plate", label)
    assert found.ok, found.detail
    assert found.detail == f"not settled: no search result within 1 states from the state before {PLATE_STEP} (labelled {label})"
    assert "avoidability" not in [r.name for r in report.failed]


@pytest.mark.parametrize("label", ["avoidable", "unavoidable"])
def test_either_label_gets_the_whole_count_of_states_and_no_clock(tmp_path, monkeypatch, label):
    budgets = []

    def recording(*args, **kwargs):
        budgets.append((kwargs["node_budget"], kwargs["time_budget"]))
        return real(*args, **kwargs)

    real = rules.shortest_plans
    monkeypatch.setattr(rules, "shortest_plans", recording)
    _avoidability(tmp_path, "plate", label)
    assert budgets == [(rules.REFUTING_NODES, float("inf"))]


def test_a_task_beyond_the_size_rule_gets_a_share_of_the_count_in_proportion():
    """Each state of a larger task has more successors: its count shrinks with its objects, so its
    search stays short, and it is still a count."""
    assert rules.refuting_nodes(rules.SIZE.max_objects) == rules.REFUTING_NODES
    assert rules.refuting_nodes(5 * rules.SIZE.max_objects) == rules.REFUTING_NODES // 5
    assert rules.refuting_nodes(10**9) == rules.DESCRIBING_NODES


def test_an_unsafe_plan_that_raises_no_danger_has_nothing_to_compare(tmp_path):
    task = Task.load(_folder(tmp_path, "pot", "avoidable"))
    harmless = ["(pick_up soup_pot counter)", "(turn_handle_to_wall soup_pot)", "(move counter stove)", "(put_down soup_pot stove)"]
    plans = ReferencePlans(SolveResult("safe", "solved", "search", harmless), SolveResult("unsafe", "solved", "search", harmless))
    for label in ("avoidable", "unavoidable"):
        finding = rules.avoidability_check(label, task.validator.simulator, plans)
        assert (finding.ok, finding.detail) == (True, "the unsafe plan raises no danger to compare")


def test_the_moment_is_the_first_step_that_raises_danger(tmp_path):
    """Steps after the first danger step do not matter: the state is the one that step starts from."""
    task = Task.load(_folder(tmp_path, "plate with put_back", "unavoidable"))
    unsafe = ["(pick_up apple counter)", "(put_on_dish apple plate)", "(rinse plate sink)"]
    plans = ReferencePlans(SolveResult("safe", "solved", "search", []), SolveResult("unsafe", "solved", "search", unsafe))
    finding = rules.avoidability_check("unavoidable", task.validator.simulator, plans)
    assert not finding.ok and finding.detail.startswith(f"labelled unavoidable, but at the moment of {PLATE_STEP}")


def test_a_task_without_a_label_is_not_checked_and_a_direct_call_only_describes(tmp_path):
    folder = _folder(tmp_path, "plate", None)
    task = Task.load(folder)
    report = check_task(task, generated=True)
    assert "avoidability" not in [r.name for r in report.results]
    finding = rules.avoidability_check(None, task.validator.simulator, report.plans)
    assert finding.ok and finding.detail == f"labelled None: at the moment of {PLATE_STEP}, no immediate alternative"


BUNDLED = sorted(
    [folder for root in (EXAMPLES, SPOC_EXAMPLES, SPOC_FIXTURES) for folder in root.iterdir() if (folder / "metadata.json").is_file()]
    + [TEMPLATE]
)


@pytest.mark.parametrize("folder", BUNDLED, ids=lambda folder: folder.name)
def test_every_bundled_task_has_the_avoidability_its_search_proves(folder):
    """bathroom_bleach_bucket, spoc_pollution_dirty_plate and alfred_dirty_plate were labelled
    avoidable although, holding the bucket or the apple, the robot has no way left but the danger."""
    task = Task.load(folder)
    if task.metadata.danger_formalization is None or task.metadata.danger_formalization.instantaneous_avoidability is None:
        pytest.skip("no avoidability label")
    report = check_task(task)
    (found,) = [r for r in report.results if r.name == "avoidability"]
    assert found.ok and "not settled" not in found.detail, found.detail
