"""Importing well-behaved DESPITE task folders: our task folders, the checks, the report, the CLI."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from safeforge.cli import import_despite as despite_cli
from safeforge.despite_import import (
    FAILED,
    IMPORTED,
    MISMATCH,
    REPORT,
    find_tasks,
    import_despite_task,
    import_many,
)
from safeforge.despite_import._importer import _basic_pddl_check
from safeforge.task.folder import Task

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "despite"
BENIGN = ["bathroom_wet_floor_mismatch", "elderly_care_water_bottle", "kitchen_stove_child"]
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    """The benign fixtures and two broken tasks, imported once for the whole module."""
    broken = tmp_path_factory.mktemp("broken")
    raising = broken / "raising_task"
    raising.mkdir()
    code = (FIXTURES / "elderly_care_water_bottle" / "code.py").read_text()
    (raising / "code.py").write_text(
        code.replace(
            "problem.add_goal(self.item_at(self.water_bottle, self.bedside_table))", "raise ValueError('goal location is undefined')"
        )
    )
    typo = broken / "danger_name_typo"
    typo.mkdir()
    (typo / "code.py").write_text(code.replace('"place_water_bottle_at_edge": And', '"place_bottle_at_edge": And'))
    out = tmp_path_factory.mktemp("out")
    lines = []
    results = import_many([FIXTURES, raising, typo, broken / "missing"], out, jobs=3, on_result=lines.append)
    return out, {r.task_id: r for r in results}, lines


def test_benign_tasks_are_found_and_hostile_ones_are_not(imported):
    assert [p.name for p in find_tasks([FIXTURES])] == BENIGN


def test_well_formed_tasks_import_with_every_check_passing(imported):
    out, results, _ = imported
    for task_id in ("elderly_care_water_bottle", "kitchen_stove_child"):
        result = results[task_id]
        assert result.outcome == IMPORTED, result.reason
        names = [c.name for c in result.checks]
        assert names[:6] == ["structure", "names", "do-nothing actions", "conditional danger", "reference plans", "validator agreement"]
        assert names[-3:] == ["DESPITE safe plan", "DESPITE unsafe plan", "DESPITE basic PDDL"]
        # the rules of generated tasks only warn on an imported one (DESPITE's water bottle: two placements, as short)
        assert all(c.advisory for c in result.checks if not c.ok)
        folder = out / task_id
        assert result.output == str(folder)
        assert sorted(p.name for p in folder.iterdir()) == [
            "domain.pddl",
            "metadata.json",
            "problem.pddl",
            "safety_domain.pddl",
            "safety_problem.pddl",
        ]
        assert Task.load(folder).analysis.ok
    warned = {c.name: c.detail for c in results["elderly_care_water_bottle"].checks if not c.ok}
    assert list(warned) == ["safety effort"] and "as short as the shortest unsafe plan" in warned["safety effort"]


def test_our_task_keeps_despites_names_and_danger_logic(imported):
    out, _, _ = imported
    domain = (out / "elderly_care_water_bottle" / "safety_domain.pddl").read_text()
    assert "(:action place_water_bottle_at_edge" in domain
    assert (
        "(when (and (setting_is_elderly_care_bedroom) (elderly_person_in_bed) (table_edge_within_arm_swing)) (increase (danger) 1))"
    ) in domain
    assert "(= (danger) 0)" in (out / "elderly_care_water_bottle" / "safety_problem.pddl").read_text()
    basic = (out / "elderly_care_water_bottle" / "domain.pddl").read_text()
    assert "danger" not in basic and "(define (domain basic-domain)" in basic


def test_metadata_is_carried_over_with_provenance(imported):
    out, _, _ = imported
    despite = json.loads((FIXTURES / "kitchen_stove_child" / "metadata.json").read_text())
    ours = json.loads((out / "kitchen_stove_child" / "metadata.json").read_text())
    assert ours["task_id"] == "kitchen_stove_child"
    # DESPITE writes `assumptions` as one string; an older list form is carried over as one line each
    assert ours["danger_formalization"] == {
        **despite["danger_formalization"],
        "assumptions": "\n".join(despite["danger_formalization"]["assumptions"]),
    }
    provenance = ours["provenance"]
    assert provenance["source"] == "despite"
    assert provenance["imported_from"] == "kitchen_stove_child"  # no path of this machine
    assert provenance["despite_reference_plans"] == despite["reference_feasible_plans"]
    assert len(provenance["code_sha256"]) == 64 and provenance["imported_at"]
    assert ours["reference_feasible_plans"]["unsafe"]  # ours, recorded by the check
    assert ours["context_predicates"] == ["burner_within_child_reach", "child_in_kitchen"]


def test_despite_plans_that_do_not_score_as_published_are_a_mismatch(imported):
    out, results, _ = imported
    result = results["bathroom_wet_floor_mismatch"]
    assert result.outcome == MISMATCH
    assert result.reason.startswith("DESPITE safe plan: scores 1, not 2: danger raised at step 3 by (let_resident_in)")
    failed = [c.name for c in result.checks if not c.ok and not c.advisory]  # DESPITE's dry_floor acts on nothing: a warning
    assert failed == ["DESPITE safe plan"]
    assert (out / "bathroom_wet_floor_mismatch" / "safety_domain.pddl").is_file()  # imported all the same


def test_code_that_raises_is_a_failure_with_its_traceback(imported):
    out, results, _ = imported
    result = results["raising_task"]
    assert result.outcome == FAILED and result.output is None
    assert result.reason == "code.py error: ValueError: goal location is undefined"
    assert "in _set_goals" in result.traceback and "raise ValueError" in result.traceback
    assert not (out / "raising_task").exists()


def test_danger_for_a_misspelt_action_is_a_warning_and_a_mismatch(imported):
    _, results, _ = imported
    result = results["danger_name_typo"]
    assert result.outcome == MISMATCH
    assert result.warnings == [
        "no metadata.json: task_id is the folder name, DESPITE's plans cannot be checked",
        "apply_danger_effects: no action named 'place_bottle_at_edge'; its danger condition is ignored",
    ]
    assert "no action raises (danger)" in result.reason


def test_a_folder_without_code_py_fails_and_the_run_goes_on(imported):
    out, results, lines = imported
    assert results["missing"].outcome == FAILED
    assert "code.py is missing" in results["missing"].reason
    report = [json.loads(line) for line in (out / REPORT).read_text().splitlines()]
    assert sorted(r["task_id"] for r in report) == sorted(results) == sorted(r.task_id for r in lines)
    assert {r["outcome"] for r in report} == {IMPORTED, MISMATCH, FAILED}


def test_an_existing_task_folder_is_not_replaced_without_overwrite(imported):
    out, _, _ = imported
    result = import_despite_task(FIXTURES / "kitchen_stove_child", out)
    assert result.outcome == FAILED and "already exists (use --overwrite" in result.reason


def test_differences_from_despites_basic_pddl_are_reported(imported, tmp_path):
    out, _, _ = imported
    source = Path(shutil.copytree(FIXTURES / "kitchen_stove_child", tmp_path / "kitchen_stove_child"))
    domain = (source / "domain.pddl").read_text()
    cut = domain.index(" (:action turn_on_burner")
    (source / "domain.pddl").write_text(domain[:cut] + ")\n")
    [check] = _basic_pddl_check(Task.load(out / "kitchen_stove_child"), source)
    assert not check.ok and check.detail == "actions only in ours: turn_on_burner"


@pytest.mark.parametrize("kind", ["symlink to a secret", "hard link to a secret", "fifo", "oversized"])
def test_despites_basic_pddl_is_read_only_from_small_regular_files(imported, tmp_path, kind):
    """DESPITE's own domain.pddl is hostile input too: never followed, never blocking, size-capped."""
    out, _, _ = imported
    source = Path(shutil.copytree(FIXTURES / "kitchen_stove_child", tmp_path / "kitchen_stove_child"))
    domain = source / "domain.pddl"
    domain.unlink()
    if kind == "symlink to a secret":
        secret = tmp_path / "secret.txt"
        secret.write_text("topsecret-token (define")
        domain.symlink_to(secret)
        expected = "is a symbolic link"
    elif kind == "hard link to a secret":
        secret = tmp_path / "secret.txt"
        secret.write_text("topsecret-token (define")
        secret.chmod(0o600)
        os.link(secret, domain)
        expected = "has 2 names (hard links)"
    elif kind == "fifo":
        os.mkfifo(domain)
        expected = "is a FIFO, not a regular file"
    else:
        domain.write_text("(define (domain big)" + " " * (2 << 20) + ")")
        expected = "the limit is 1,048,576"
    [check] = _basic_pddl_check(Task.load(out / "kitchen_stove_child"), source)
    assert not check.ok and check.detail.startswith("cannot be read: ") and expected in check.detail
    assert "topsecret" not in check.detail


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="safeforge")
    despite_cli.register(parser.add_subparsers(dest="command", required=True))
    return parser


def test_cli_prints_one_line_per_task_a_summary_and_exits_1_on_mismatch(tmp_path, capsys):
    args = _parser().parse_args(
        ["import-despite", str(FIXTURES / "bathroom_wet_floor_mismatch"), "--out", str(tmp_path), "--plan-time-limit", "30"]
    )
    assert args.func(args) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"mismatch bathroom_wet_floor_mismatch -> {tmp_path / 'bathroom_wet_floor_mismatch'}: ")
    assert lines[1] == f"0 imported, 1 mismatch, 0 failed (report: {tmp_path / REPORT})"
    assert lines[2].startswith("isolation: active: minimal environment, private directory")


def test_safeforge_command_imports_and_exits_0(tmp_path):
    safeforge = Path(sys.executable).with_name("safeforge")
    run = subprocess.run(
        [str(safeforge), "import-despite", str(FIXTURES / "elderly_care_water_bottle"), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.startswith("imported elderly_care_water_bottle")
    assert (tmp_path / "elderly_care_water_bottle" / "safety_domain.pddl").is_file()


def test_the_check_of_an_imported_task_has_one_time_limit_in_all(tmp_path):
    """`--plan-time-limit` bounds the imported task's whole check (reading and deriving included),
    not each planner call: 4,000 more actions take longer to read than the 0.05 s it is given."""
    slow = tmp_path / "slow_task"
    slow.mkdir()
    code = (FIXTURES / "elderly_care_water_bottle" / "code.py").read_text()
    idle = (
        "        idle = []\n"
        "        for i in range(4000):\n"
        "            noop = InstantaneousAction(f'noop_{i}')\n"
        "            noop.add_precondition(self.robot_at(self.kitchen))\n"
        "            noop.add_effect(self.robot_at(self.kitchen), True)\n"
        "            idle.append(noop)\n"
        "        return (*idle, navigate_to_kitchen,"
    )
    (slow / "code.py").write_text(code.replace("        return (navigate_to_kitchen,", idle, 1))
    result = import_despite_task(slow, tmp_path / "out", plan_time_limit=0.05)
    assert result.outcome == FAILED
    assert result.reason.startswith("the check ran out of its time limit of 0.05s while "), result.reason
