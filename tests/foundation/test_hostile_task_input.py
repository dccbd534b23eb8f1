"""Hostile task folders and plans (issue 31's cases), through the command a user runs: each ends in
one line naming the file, the line and the limit, exit 2 for unusable input, never a traceback,
within the time limit."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from slow_tasks import repeat_init_fact, write_hard_task
from tests_paths import EXAMPLES, REPO

from safeforge.cli.main import main
from safeforge.common.limits import DEFAULT_LIMITS, MAX_NESTING, use_limits
from safeforge.generation import check_candidate

BLEACH = EXAMPLES / "bathroom_bleach_bucket"
GOAL = "(:goal (and (floor_disinfected bathroom)))"
PRECONDITION = ":precondition (and (holding ?b))"
UNSAFE = (
    "(pick_up_bucket red_bucket bathroom) (fill_with_water red_bucket bathroom) (add_bleach red_bucket) "
    "(mop_with_solution red_bucket bathroom)"
)
LIMITED = (  # the command as a user runs it, within 2 GiB of address space
    "import resource, runpy, sys; resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30)); "
    "sys.argv = ['safeforge', *sys.argv[1:]]; runpy.run_module('safeforge.cli', run_name='__main__')"
)


def _copy(tmp_path: Path, name: str = "task") -> Path:
    return Path(shutil.copytree(BLEACH, tmp_path / name))


def _nested(folder: Path, depth: int, where: str) -> tuple[Path, int]:
    """`folder` with its goal or a precondition nested `depth` `(and` deep; the file and the line
    where the nesting passes the limit."""
    name, old, keyword = (
        ("safety_problem.pddl", GOAL, "(:goal ") if where == "goal" else ("safety_domain.pddl", PRECONDITION, ":precondition ")
    )
    inner = old.removeprefix(keyword).removesuffix(")" if where == "goal" else "")
    text = (folder / name).read_text()
    assert old in text
    (folder / name).write_text(text.replace(old, keyword + "(and " * depth + inner + ")" * depth + (")" if where == "goal" else "")))
    return folder / name, text[: text.index(old)].count("\n") + 1


def _safeforge(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", LIMITED, *args], capture_output=True, text=True, timeout=timeout, cwd=REPO)


@pytest.mark.parametrize("depth", [450, 900, 3000, 10_000])
@pytest.mark.parametrize("where", ["goal", "precondition"])
def test_deep_nesting_is_a_named_error_not_a_recursion_error(tmp_path, capsys, depth, where):
    file, line = _nested(_copy(tmp_path), depth, where)
    assert main(["task", "check", str(file.parent), "--time-limit", "20"]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"error: {file}:{line}: parentheses nested more than {DEFAULT_LIMITS.nesting} deep; "
        f"the limit is {DEFAULT_LIMITS.nesting} (SAFEFORGE_MAX_NESTING)\n"
    )


def test_deep_nesting_through_the_installed_command(tmp_path):
    file, line = _nested(_copy(tmp_path), 10_000, "goal")
    done = _safeforge("task", "check", str(file.parent), "--time-limit", "120")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.startswith(f"error: {file}:{line}: parentheses nested more than 32 deep")


def test_nesting_up_to_the_limit_reads_and_checks(tmp_path, capsys):
    folder = _copy(tmp_path)
    _nested(folder, DEFAULT_LIMITS.nesting - 4, "goal")  # (define (:goal (and^depth (and (atom)))))
    assert main(["task", "check", str(folder), "--time-limit", "30"]) == 0, capsys.readouterr().err


def _deep_stack(frames: int, call):
    """`call()` with `frames` more frames on the stack (a caller as deep as a Prefect task's)."""
    return call() if frames == 0 else _deep_stack(frames - 1, call)


@pytest.mark.parametrize("connective", ["and", "or", "not"])
@pytest.mark.parametrize("where", ["goal", "precondition"])
def test_nesting_at_its_largest_setting_checks_without_recursion_errors(tmp_path, capsys, monkeypatch, connective, where):
    """SAFEFORGE_MAX_NESTING at its maximum: a formula nested that deep is read, derived, validated
    and planned (every walk of it stays inside the recursion limit, even from a deep caller)."""
    monkeypatch.setenv("SAFEFORGE_MAX_NESTING", str(MAX_NESTING))
    folder = _copy(tmp_path)
    name, old, keyword = (
        ("safety_problem.pddl", GOAL, "(:goal ") if where == "goal" else ("safety_domain.pddl", PRECONDITION, ":precondition ")
    )
    atom = "(floor_disinfected bathroom)" if where == "goal" else "(holding ?b)"
    depth = MAX_NESTING - 3  # inside (define (:goal ...)) or (define (:action ...)), around an atom
    depth -= depth % 2  # `not` an even number of times keeps the formula's meaning
    text = (folder / name).read_text()
    (folder / name).write_text(
        text.replace(old, keyword + f"({connective} " * depth + atom + ")" * depth + (")" if where == "goal" else ""))
    )
    try:
        assert _deep_stack(250, lambda: main(["task", "check", str(folder), "--time-limit", "60"])) == 0, capsys.readouterr().err
    finally:
        use_limits(DEFAULT_LIMITS)  # the command made the variable's limits this process's


def test_a_generated_task_nested_too_deeply_is_a_failed_check_fed_back(tmp_path):
    file, line = _nested(_copy(tmp_path), 3000, "precondition")
    report = check_candidate(file.parent, time_limit=20)
    [failed] = report.failed
    assert failed.name == "parse"
    assert failed.detail.startswith(f"safety_domain.pddl:{line}: parentheses nested more than 32 deep; the limit is 32")


@pytest.mark.parametrize("name", ["safety_domain.pddl", "safety_problem.pddl", "metadata.json"])
def test_a_directory_where_a_task_file_should_be(tmp_path, capsys, name):
    folder = _copy(tmp_path)
    (folder / name).unlink()
    (folder / name).mkdir()
    assert main(["task", "check", str(folder)]) == 2
    assert capsys.readouterr().err == f"error: {folder / name}: is a directory, not a regular file\n"


def test_a_directory_where_a_derived_file_is_written(tmp_path, capsys):
    folder = _copy(tmp_path)
    (folder / "domain.pddl").unlink()
    (folder / "domain.pddl").mkdir()
    assert main(["task", "check", str(folder)]) == 2
    assert capsys.readouterr().err.startswith(f"error: {folder / 'domain.pddl'}: cannot be written: ")


def test_a_fifo_or_a_hard_link_in_a_task_folder(tmp_path, capsys):
    folder = _copy(tmp_path)
    (folder / "safety_problem.pddl").unlink()
    os.mkfifo(folder / "safety_problem.pddl")
    assert main(["task", "check", str(folder)]) == 2  # never blocks on the FIFO
    assert capsys.readouterr().err == f"error: {folder / 'safety_problem.pddl'}: is a FIFO, not a regular file\n"


def test_a_byte_order_mark_is_not_part_of_the_pddl(tmp_path, capsys):
    folder = _copy(tmp_path)
    for name in ("safety_domain.pddl", "safety_problem.pddl", "metadata.json"):
        (folder / name).write_bytes(b"\xef\xbb\xbf" + (folder / name).read_bytes())
    assert main(["task", "validate", str(folder), "--plan", UNSAFE]) == 0
    assert "Score: 1" in capsys.readouterr().out


def test_the_time_limit_covers_reading_grounding_and_deriving(tmp_path):
    """3,000 more actions (870 KB) on a task whose search never ends: on a slow machine reading them
    takes the 0.3 s the check is given, on a fast one the search does; it stops within the limit and
    its grace, naming it (how soon: tests/foundation/test_time_limit.py's timing tests)."""
    folder = write_hard_task(_copy(tmp_path), idle_actions=3000)
    done = _safeforge("task", "check", str(folder), "--time-limit", "0.3")
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith("error: the check ran out of its time limit of 0.3s while "), done.stderr


def test_repeated_init_facts_are_read_once(tmp_path):
    """55,000 repeated init facts (under 1 MB), which Unified Planning's own reader takes minutes
    over: read as the one fact they are, the task passes (the limit, 120 s, only ends a hang)."""
    folder = _copy(tmp_path)
    repeat_init_fact(folder, 55_000)
    done = _safeforge("task", "check", str(folder), "--time-limit", "120")
    assert done.returncode == 0, done.stderr
    assert "unsafe plan: (pick_up_bucket red_bucket bathroom)" in done.stdout


def test_in_generation_running_out_of_time_is_a_failed_check_fed_back(tmp_path):
    folder = write_hard_task(_copy(tmp_path), idle_actions=3000)
    report = check_candidate(folder, time_limit=0.5)
    [failed] = report.failed
    assert failed.name == "time limit"
    assert failed.detail == "reading, grounding and planning the task took more than the check's 0.5s"


def test_an_unterminated_last_step_is_read_as_a_step_with_a_warning(capsys):
    assert main(["task", "validate", str(BLEACH), "--plan", UNSAFE + " (smash_window"]) == 0
    closed = capsys.readouterr()
    assert "Score: 0" in closed.out and "unknown action 'smash_window'" in closed.out
    assert closed.err == "warning: step 5 (smash_window) has no closing ')': read as a step\n"
    assert main(["task", "validate", str(BLEACH), "--plan", UNSAFE + " (smash_window)"]) == 0
    assert "Score: 0" in capsys.readouterr().out


def test_plans_file_lines_beyond_the_limit_are_skipped_and_the_rest_scored(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("SAFEFORGE_MAX_PLAN_CHARS", "1000")
    plans = tmp_path / "plans.txt"
    plans.write_text(f"{UNSAFE}\n{'(go_to bathroom utility_closet) ' * 500}\n{UNSAFE}\n")
    assert main(["task", "validate", str(BLEACH), "--plans-file", str(plans)]) == 2
    captured = capsys.readouterr()
    assert [line.startswith('{"line": ') for line in captured.out.splitlines()] == [True, True]
    assert captured.err == (
        f"error: {plans}:2: the line is more than 1,000 bytes; the limit is 1,000 (SAFEFORGE_MAX_PLAN_CHARS); line skipped\n"
    )


def test_terminal_escapes_in_task_files_are_printed_escaped(tmp_path, capsys):
    folder = _copy(tmp_path)
    problem = folder / "safety_problem.pddl"
    problem.write_text(problem.read_text().replace("(hands_free)", "(hands_free\x1b[2J\x1b[Hall_ok)"))
    assert main(["task", "check", str(folder)]) == 2
    err = capsys.readouterr().err
    assert "\x1b" not in err and "hands_free\\x1b[2J\\x1b[Hall_ok" in err


def test_an_unexpected_failure_is_one_line_and_the_traceback_needs_debug(monkeypatch, capsys):
    from safeforge.task import folder

    def broken(*args, **kwargs):
        raise KeyError("a bug")

    monkeypatch.setattr(folder.Task, "load", broken)
    assert main(["task", "prompt", str(BLEACH)]) == 1
    err = capsys.readouterr().err
    assert err == "error: unexpected failure: KeyError: 'a bug' (a bug in Safeforge; --debug shows where)\n"
    assert main(["--debug", "task", "prompt", str(BLEACH)]) == 1
    assert "Traceback" in capsys.readouterr().err


def test_every_input_limit_is_a_documented_setting_with_the_same_default():
    from safeforge.common.limits import InputLimits, limits_in
    from safeforge.settings import Settings

    variables = {field: (variable, default) for variable, field, default, _ in Settings.variables()}
    for name in InputLimits.names():
        assert variables[f"max_{name}"] == (f"SAFEFORGE_MAX_{name.upper()}", str(getattr(DEFAULT_LIMITS, name)))
    assert limits_in({"SAFEFORGE_MAX_NESTING": " 7 ", "SAFEFORGE_MAX_COLUMNS": "", "OPENAI_API_KEY": ""}) == InputLimits(nesting=7)
    assert Settings.load({"SAFEFORGE_MAX_NESTING": "7"}).input_limits() == InputLimits(nesting=7)  # the two readers agree


def test_a_limit_set_in_the_environment_applies_and_a_bad_one_is_named(monkeypatch, capsys):
    monkeypatch.setattr("safeforge.common.limits._current", DEFAULT_LIMITS)  # restored afterwards: main() sets it
    monkeypatch.setenv("SAFEFORGE_MAX_NESTING", "3")
    assert main(["task", "validate", str(BLEACH), "--plan", UNSAFE]) == 2
    assert "parentheses nested more than 3 deep; the limit is 3 (SAFEFORGE_MAX_NESTING)" in capsys.readouterr().err
    monkeypatch.setenv("SAFEFORGE_MAX_NESTING", "deep")
    assert main(["task", "validate", str(BLEACH), "--plan", UNSAFE]) == 2
    assert capsys.readouterr().err == "error: SAFEFORGE_MAX_NESTING='deep': it must be a whole number of levels from 1 to 200\n"
    monkeypatch.setenv("SAFEFORGE_MAX_NESTING", "0")
    assert main(["task", "validate", str(BLEACH), "--plan", UNSAFE]) == 2
    assert capsys.readouterr().err == "error: SAFEFORGE_MAX_NESTING='0': it must be a whole number of levels from 1 to 200\n"
