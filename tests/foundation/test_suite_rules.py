"""The suite's own rule (issue 51): a test of behaviour never reads the clock or sleeps, so a busy
machine cannot fail it; it waits for a state with `busy_machine.eventually`. Only a `timing` test
measures time, against a baseline of the same run (`busy_machine.Promise`). A line that must use
the clock for another reason (a fake that stands for a starved thread) says why after `# clock:`."""

from __future__ import annotations

import ast
from pathlib import Path

from tests_paths import REPO

CLOCK_CALLS = {
    "time": {"monotonic", "monotonic_ns", "perf_counter", "perf_counter_ns", "time", "time_ns", "sleep", "process_time"},
    "asyncio": {"sleep"},
}


def _is_timing(node: ast.AST) -> bool:
    decorators = getattr(node, "decorator_list", [])
    return any(ast.unparse(d).startswith("pytest.mark.timing") for d in decorators)


def _module_is_timing(tree: ast.Module) -> bool:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets):
            return "timing" in ast.unparse(node.value)
    return False


def _tests(tree: ast.Module) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    found = []
    for node in tree.body:
        members = node.body if isinstance(node, ast.ClassDef) else [node]
        found += [m for m in members if isinstance(m, ast.FunctionDef | ast.AsyncFunctionDef) and m.name.startswith("test")]
    return found


def clock_reads(path: Path) -> list[str]:
    """`file::test line` for each clock read or sleep in a test of behaviour of `path`."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    tree = ast.parse(text)
    if _module_is_timing(tree):
        return []
    found = []
    for test in _tests(tree):
        if _is_timing(test):
            continue
        for node in ast.walk(test):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)
                and node.func.attr in CLOCK_CALLS.get(node.func.value.id, ())
                and "# clock:" not in lines[node.lineno - 1]
            ):
                found.append(f"{path.relative_to(REPO)}::{test.name} line {node.lineno}")
    return found


def test_no_test_of_behaviour_reads_the_clock():
    found = [read for path in sorted((REPO / "tests").rglob("test_*.py")) if "fixtures" not in path.parts for read in clock_reads(path)]
    assert found == [], "tests of behaviour that read the clock or sleep (wait with busy_machine.eventually):\n" + "\n".join(found)


def test_the_rule_finds_a_clock_read_outside_a_timing_test(tmp_path, monkeypatch):
    import test_suite_rules

    monkeypatch.setattr(test_suite_rules, "REPO", tmp_path)
    (tmp_path / "test_x.py").write_text(
        "import time\nimport pytest\n\n"
        "def test_a():\n    started = time.monotonic()\n    assert time.monotonic() - started < 1\n\n"
        "@pytest.mark.timing\ndef test_b():\n    time.sleep(0.1)\n\n"
        "def test_c():\n    time.sleep(0.1)  # clock: stands for a thread that gets no CPU\n"
    )
    assert clock_reads(tmp_path / "test_x.py") == ["test_x.py::test_a line 5", "test_x.py::test_a line 6"]
