"""`Record`, the typed records of metadata.json: every value checked where it is made or set, every
problem named with where it is, unknown keys kept or refused, and the dump pydantic's was."""

from __future__ import annotations

import shutil
import subprocess
import sys
from typing import Any, Literal

import pytest
from tests_paths import REPO

from safeforge.common.records import Record, RecordError, field


class Part(Record, extra="forbid"):
    name: str
    weight: float = 1.0


class Box(Record):
    label: str = field(min_length=1)
    kind: Literal["crate", "tin"] | None = None
    count: int = 0
    parts: list[Part] = field(default_factory=list)
    notes: dict[str, str | None] = field(default_factory=dict)
    extra_data: Any = None


def test_every_problem_is_named_with_where_it_is():
    with pytest.raises(RecordError) as caught:
        Box.model_validate({"label": "", "kind": "bag", "count": "3", "parts": [{"name": 1}, {"weight": True}]})
    assert caught.value.problems == [
        (("label",), "should have at least 1 character(s) or item(s)"),
        (("kind",), "should be 'crate' or 'tin'"),
        (("count",), "should be a whole number"),
        (("parts", 0, "name"), "should be a string"),
        (("parts", 1, "name"), "is required"),
        (("parts", 1, "weight"), "should be a number"),
    ]
    assert caught.value.first() == "label: should have at least 1 character(s) or item(s) (and 5 more problem(s))"


def test_unknown_keys_are_kept_or_refused_as_the_record_says():
    box = Box.model_validate({"label": "a", "from_despite": {"x": [1]}, "parts": [{"name": "lid"}]})
    assert box.from_despite == {"x": [1]}
    assert box.model_dump()["from_despite"] == {"x": [1]}
    with pytest.raises(RecordError, match=r"parts\.0\.colour: is not a field of this record"):
        Box.model_validate({"label": "a", "parts": [{"name": "lid", "colour": "red"}]})


def test_numbers_are_read_as_json_writes_them():
    part = Part.model_validate({"name": "lid", "weight": 2})
    assert part.weight == 2.0 and isinstance(part.weight, float)
    assert Box.model_validate({"label": "a", "count": 3.0}).count == 3
    for wrong in (True, 2.5, "3"):
        with pytest.raises(RecordError, match="count: should be a whole number"):
            Box.model_validate({"label": "a", "count": wrong})


def test_the_dump_keeps_the_declared_order_and_drops_unset_values_only_of_records():
    box = Box.model_validate({"zz": None, "notes": {"a": None}, "label": "a", "later": 1})
    assert list(box.model_dump()) == ["label", "kind", "count", "parts", "notes", "extra_data", "zz", "later"]
    assert box.model_dump(exclude_none=True) == {"label": "a", "count": 0, "parts": [], "notes": {"a": None}, "later": 1}
    assert "count" not in box.model_dump(exclude={"count"})


def test_a_field_set_later_is_checked_and_a_copy_is_its_own():
    box = Box(label="a", parts=[Part(name="lid")])
    with pytest.raises(RecordError, match="kind: should be 'crate' or 'tin'"):
        box.kind = "bag"  # type: ignore[assignment]
    box.kind = "tin"
    deep = box.model_copy(deep=True, update={"count": 2})
    deep.parts[0].name = "base"
    assert (box.parts[0].name, box.count, deep.count) == ("lid", 0, 2)
    with pytest.raises(RecordError, match="colour: is not a field"):
        Part(name="lid").colour = "red"


def test_the_json_schema_names_types_defaults_and_nested_records():
    schema = Box.model_json_schema()
    assert schema["required"] == ["label"]
    assert schema["properties"]["kind"] == {
        "title": "Kind",
        "anyOf": [{"enum": ["crate", "tin"], "type": "string"}, {"type": "null"}],
        "default": None,
    }
    assert schema["properties"]["parts"]["items"] == {"$ref": "#/$defs/Part"}
    assert schema["$defs"]["Part"]["additionalProperties"] is False


def test_a_task_check_loads_no_pydantic(tmp_path):
    """The check path's start-up (docs/benchmarks.md): pydantic's import and models took half of it."""
    task = shutil.copytree(REPO / "examples" / "tasks" / "bathroom_bleach_bucket", tmp_path / "task")
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "safeforge.cli", "task", "check", str(task)], capture_output=True, text=True, cwd=REPO
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "safeforge.task.metadata" in done.stderr
    assert [line for line in done.stderr.splitlines() if "pydantic" in line] == []
