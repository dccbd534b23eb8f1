"""The table of benchmarks/despite_demo_tasks.py (DESPITE's demo tasks against our rules), from
given check reports: no DESPITE checkout is read here."""

from __future__ import annotations

import importlib.util
import sys

from tests_paths import REPO

from safeforge.task.checks import CheckReport, CheckResult


def _script():
    spec = importlib.util.spec_from_file_location("despite_demo_tasks", REPO / "benchmarks" / "despite_demo_tasks.py")
    module = sys.modules[spec.name] = importlib.util.module_from_spec(spec)  # its dataclasses look it up
    spec.loader.exec_module(module)
    return module


def test_the_table_has_a_line_per_failing_check_with_its_despite_rule():
    script = _script()
    refused = CheckReport(
        "neiss_1",
        [
            CheckResult("structure", True, "ok"),
            CheckResult("names", False, "predicate salt_level_safe (safe) | a pipe\nand a new line"),
            CheckResult("avoidability", False, "labelled avoidable, but " + "x" * 300),
            CheckResult("new rule", False, "a check nobody mapped yet"),
            CheckResult("safety effort", False, "only a warning", advisory=True),
        ],
    )
    rows = [
        script.Row.of("neiss_1", "imported", refused),
        script.Row.of("normbank_2", "imported", CheckReport("normbank_2", [CheckResult("structure", True, "ok")])),
        script.Row.of("broken", "failed", None, "code.py error: ValueError: goal location is undefined"),
    ]
    lines = script.table(rows).splitlines()
    assert lines[:2] == ["| task | verdict | failing check | detail (shortened) | DESPITE rule it enforces |", "|---|---|---|---|---|"]
    assert lines[2] == (
        "| neiss_1 | refused | names | predicate salt_level_safe (safe) \\| a pipe and a new line | "
        "codegen validation rule 8: neutral action names (held to every name a model sees) |"
    )
    assert lines[3].startswith("|  |  | avoidability | labelled avoidable, but xxx")
    detail, source = [cell.strip() for cell in lines[3].split("|")[4:6]]
    assert len(detail) == script.DETAIL_CHARS and detail.endswith("…")
    assert source.startswith("extractor prompt: instantaneous avoidability")
    assert lines[4] == "|  |  | new rule | a check nobody mapped yet | not mapped: add it to SOURCES |"
    assert lines[5] == "| normbank_2 | passes | — | every check passes |  |"
    assert lines[6] == "| broken | not imported (import: failed) | — | code.py error: ValueError: goal location is undefined |  |"
    assert len(lines) == 7  # the advisory result is no line


def test_every_rule_of_a_generated_task_has_a_source():
    from rule_tasks import GENERATED_CHECKS

    script = _script()
    assert set(GENERATED_CHECKS) | {"avoidability"} <= set(script.SOURCES)
    ours = [name for name, source in script.SOURCES.items() if source.startswith("ours")]
    assert sorted(ours) == ["do-nothing actions", "plan rules", "prompt rules"]  # docs/generation.md gives the reasons


def test_the_table_in_the_docs_is_replaced_between_its_markers():
    script = _script()
    start, end = script.MARKERS
    page = f"# Page\n\n{start}| old |\n{end}\n\nafter\n"
    replaced = script.replace_table(page, "DESPITE commit abc\n\n| new |\n")
    assert replaced == f"# Page\n\n{start}DESPITE commit abc\n\n| new |\n{end}\n\nafter\n"
    docs = (REPO / "docs" / "generation.md").read_text(encoding="utf-8")
    assert docs.count(start) == 1 and docs.count(end) == 1  # the page the script updates has its markers
