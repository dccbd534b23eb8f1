"""The do-nothing rule: an action that two parameters naming one object turn into a step that
changes nothing (`(go_to drawer drawer)`) is named, with how to rule it out."""

from __future__ import annotations

import json

from tests_paths import REPO

from safeforge.pddl.reader import read_task
from safeforge.task.do_nothing import do_nothing_check

DOMAIN = """(define (domain d)
  (:requirements :strips :typing :negative-preconditions)
  (:types area item)
  (:predicates (robot_at ?a - area) (holding ?i - item) (in ?i - item ?a - area))
  (:action go_to
    :parameters (?from - area ?to - area)
    :precondition %s
    :effect (and (robot_at ?to) (not (robot_at ?from))))
  (:action fetch
    :parameters (?i - item ?a - area ?b - area)
    :precondition (and (robot_at ?a) (in ?i ?b))
    :effect (and (holding ?i) (not (in ?i ?b)))))"""
PROBLEM = "(define (problem p) (:domain d) (:objects kitchen hall - area cup - item) (:init (robot_at kitchen)) (:goal (robot_at hall)))"


def test_a_move_from_a_place_to_itself_is_named_with_its_fix():
    finding = do_nothing_check(read_task(DOMAIN % "(robot_at ?from)", PROBLEM))
    assert not finding.ok
    assert finding.detail == (
        "action go_to with ?to the same object as ?from changes nothing (it deletes and adds (robot_at ?from)); "
        "rule that out in its precondition, e.g. (not (robot_at ?to))"
    )


def test_a_precondition_that_rules_it_out_passes():
    finding = do_nothing_check(read_task(DOMAIN % "(and (robot_at ?from) (not (robot_at ?to)))", PROBLEM))
    assert finding.ok, finding.detail


def test_the_replayed_drawer_task_rules_out_a_move_to_the_drawer_it_stands_at():
    entries = json.loads((REPO / "pipeline" / "llm" / "replay_responses" / "normbank_0.json").read_text())
    entries = entries if isinstance(entries, list) else entries["entries"]
    (task,) = [e["response"]["content"] for e in entries if "low_drawer_knife" in str(e["response"]["content"])]
    assert do_nothing_check(read_task(task["safety_domain"], task["safety_problem"])).ok
    unguarded = task["safety_domain"].replace(" (not (robot_at ?to))", "")
    finding = do_nothing_check(read_task(unguarded, task["safety_problem"]))
    assert not finding.ok and finding.detail.startswith("action go_to with ?to the same object as ?from changes nothing")
