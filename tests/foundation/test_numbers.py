"""Every number a user gives is checked: each command-line option, setting and flow parameter that
takes a number is found by walking the parsers, the settings model and the flows' signatures (so a
new one cannot escape), and is given 0, -1, nan, inf and a huge value. Out of its range: exit 2 (a
flow: a validation error) naming the range; in it: a value inside the range."""

from __future__ import annotations

import argparse
import inspect
import math
import typing

import pytest
from prefect.exceptions import ParameterTypeError

import safeforge.flows.generate
import safeforge.flows.publish
import safeforge.flows.review
from safeforge.cli.main import COMMANDS, build_parser, main
from safeforge.common.ranges import Range
from safeforge.settings import Settings, SettingsError

HOSTILE = ["0", "-1", "nan", "inf", "-inf", "1e30", str(10**30)]


def _options() -> list[tuple[list[str], argparse.Action]]:
    """(the command's words, the option) for every option of every command."""
    found = []

    def walk(parser: argparse.ArgumentParser, words: list[str]) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, [*words, name])
            elif action.option_strings:
                found.append((words, action))

    for command in COMMANDS:
        parser = build_parser([command])
        [commands] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        walk(commands.choices[command], [command])
    return found


def _numeric(action: argparse.Action) -> bool:
    takes_number = action.type in (int, float) or getattr(action, "range", None) is not None
    default_number = isinstance(action.default, int | float) and not isinstance(action.default, bool)
    return takes_number or default_number or isinstance(getattr(action.type, "range", None), Range)


NUMERIC_OPTIONS = [(words, action) for words, action in _options() if _numeric(action)]


def test_the_walk_finds_the_options_that_take_numbers():
    flags = {(" ".join(words), action.option_strings[-1]) for words, action in NUMERIC_OPTIONS}
    assert {("import-despite", "--memory-mb"), ("task check", "--time-limit"), ("generate", "--workers")} <= flags
    assert ("sources show", "--min-age") in flags  # a source's own option
    assert len(flags) >= 30


@pytest.mark.parametrize(("words", "action"), NUMERIC_OPTIONS, ids=[f"{' '.join(w)} {a.option_strings[-1]}" for w, a in NUMERIC_OPTIONS])
def test_every_numeric_option_has_a_range_named_in_its_help_and_checked(words, action, capsys):
    allowed = getattr(action.type, "range", None)
    assert isinstance(allowed, Range), f"{action.option_strings[-1]} takes a number without a range"
    assert allowed.describe() in (action.help or ""), "the help names the range"
    flag = action.option_strings[-1]
    parser = build_parser(words)
    for value in HOSTILE:
        try:
            parsed = action.type(value)
        except argparse.ArgumentTypeError:
            with pytest.raises(SystemExit) as exit_:
                parser.parse_args([*words, f"{flag}={value}"])
            assert exit_.value.code == 2
            err = capsys.readouterr().err
            assert f"argument {', '.join(action.option_strings)}: {value!r} is not {allowed.describe()}" in err, err
        else:
            assert math.isfinite(parsed) and allowed.holds(parsed) and float(value) == parsed, (flag, value, parsed)


def test_a_negative_memory_cap_is_refused_by_the_command(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["import-despite", str(tmp_path), "--out", str(tmp_path / "out"), "--memory-mb", "-5"])
    assert exit_.value.code == 2
    assert "argument --memory-mb: '-5' is not a whole number of MiB from 1 to " in capsys.readouterr().err


def _numeric_settings() -> list[str]:
    def numeric(annotation) -> bool:
        return any(kind in (int, float) for kind in (annotation, *typing.get_args(annotation)))

    return [name for name, field in Settings.model_fields.items() if numeric(field.annotation)]


def _variable(name: str) -> str:
    return {field: variable for variable, field, _, _ in Settings.variables()}[name].split(" or ")[0]


@pytest.mark.parametrize("name", _numeric_settings())
def test_every_numeric_setting_has_a_range_and_refuses_values_outside_it(name, monkeypatch, capsys):
    allowed = Settings.range_of(name)
    assert allowed is not None, f"setting {name} takes a number without a range"
    variable = _variable(name)
    for value in HOSTILE:
        try:
            loaded = getattr(Settings.load({variable: value}), name)
        except SettingsError as exc:
            assert str(exc).startswith(f"{variable}={value!r}: ") and f"it must be {allowed.describe()}" in str(exc)
            monkeypatch.setenv(variable, value)
            assert main(["config"]) == 2  # the command a user runs
            assert f"error: {variable}={value!r}" in capsys.readouterr().err
            monkeypatch.delenv(variable)
        else:
            assert allowed.holds(loaded), (variable, value, loaded)


def test_the_ranges_of_the_settings_are_in_the_configuration_page():
    from tests_paths import REPO

    page = (REPO / "docs" / "configuration.md").read_text(encoding="utf-8")
    for name in _numeric_settings():
        line = next(line for line in page.splitlines() if line.startswith(f"| `{_variable(name)}")), name
        assert f"| {Settings.range_of(name).bounds()} |" in line[0]


FLOWS = [
    value
    for module in (safeforge.flows.generate, safeforge.flows.publish, safeforge.flows.review)
    for value in vars(module).values()
    if type(value).__name__ == "Flow" and value.__module__ == module.__name__
]


def _numeric_parameters(flow) -> list[str]:
    hints = typing.get_type_hints(flow.fn, include_extras=True)
    names = []
    for name in inspect.signature(flow.fn).parameters:
        kinds = [typing.get_args(arm)[0] if typing.get_origin(arm) is typing.Annotated else arm for arm in _arms(hints[name])]
        if any(kind in (int, float) for kind in kinds):
            names.append(name)
    return names


def _arms(hint) -> tuple:
    return typing.get_args(hint) if typing.get_origin(hint) in (typing.Union, __import__("types").UnionType) else (hint,)


def test_the_walk_finds_the_flows_and_their_numeric_parameters():
    assert {flow.name for flow in FLOWS} >= {"generate", "publish", "review-push"}
    assert {"time_limit", "workers", "limit"} <= set(_numeric_parameters(next(f for f in FLOWS if f.name == "generate")))


@pytest.mark.parametrize("flow", FLOWS, ids=lambda flow: flow.name)
def test_every_numeric_flow_parameter_refuses_values_outside_its_range(flow):
    for name in _numeric_parameters(flow):
        for value in [0, -1, math.nan, math.inf, 10**30, 1e300]:
            try:
                accepted = flow.validate_parameters({name: value})[name]
            except ParameterTypeError as exc:
                assert name in str(exc)
            else:
                assert accepted == value == 0, f"flow {flow.name}: {name}={value!r} accepted"
