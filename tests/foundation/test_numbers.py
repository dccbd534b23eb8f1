"""Every number a user gives is checked: each command-line option, setting and flow parameter that
takes a number (found by `number_inputs`, so a new one cannot escape) is given 0, -1, nan, inf and
a huge value. Out of its range: exit 2 (a flow: a validation error) naming the range; in it: a
value inside the range. The fuzz test of the CLI draws other values."""

from __future__ import annotations

import argparse
import math

import pytest
from number_inputs import FLOWS, NUMERIC_OPTIONS, NUMERIC_SETTINGS, numeric_parameters, option_id, variable
from prefect.exceptions import ParameterTypeError
from tests_paths import REPO

from safeforge.cli.main import build_parser, main
from safeforge.common.ranges import Range
from safeforge.settings import Settings, SettingsError

HOSTILE = ["0", "-1", "nan", "inf", "-inf", "1e30", str(10**30)]


def test_the_walk_finds_the_options_that_take_numbers():
    flags = {option_id(words, action) for words, action in NUMERIC_OPTIONS}
    assert {"import-despite --memory-mb", "task check --time-limit", "generate --workers", "sources show --min-age"} <= flags
    assert len(flags) >= 30


@pytest.mark.parametrize(("words", "action"), NUMERIC_OPTIONS, ids=[option_id(w, a) for w, a in NUMERIC_OPTIONS])
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


@pytest.mark.parametrize("name", NUMERIC_SETTINGS)
def test_every_numeric_setting_has_a_range_and_refuses_values_outside_it(name, monkeypatch, capsys):
    allowed = Settings.range_of(name)
    assert allowed is not None, f"setting {name} takes a number without a range"
    env = variable(name)
    for value in HOSTILE:
        try:
            loaded = getattr(Settings.load({env: value}), name)
        except SettingsError as exc:
            assert str(exc).startswith(f"{env}={value!r}: ") and f"it must be {allowed.describe()}" in str(exc)
            monkeypatch.setenv(env, value)
            assert main(["config"]) == 2  # the command a user runs
            assert f"error: {env}={value!r}" in capsys.readouterr().err
            monkeypatch.delenv(env)
        else:
            assert allowed.holds(loaded), (env, value, loaded)


def test_the_ranges_of_the_settings_are_in_the_configuration_page():
    page = (REPO / "docs" / "configuration.md").read_text(encoding="utf-8").splitlines()
    for name in NUMERIC_SETTINGS:
        [line] = [line for line in page if line.startswith(f"| `{variable(name)}")]
        assert f"| {Settings.range_of(name).bounds()} |" in line


def test_the_walk_finds_the_flows_and_their_numeric_parameters():
    assert {flow.name for flow in FLOWS} >= {"generate", "publish", "review-push"}
    generate = next(f for f in FLOWS if f.name == "generate")
    assert {"time_limit", "workers", "limit"} <= set(numeric_parameters(generate))


@pytest.mark.parametrize("flow", FLOWS, ids=lambda flow: flow.name)
def test_every_numeric_flow_parameter_refuses_values_outside_its_range(flow):
    for name in numeric_parameters(flow):
        for value in [0, -1, math.nan, math.inf, 10**30, 1e300]:
            try:
                accepted = flow.validate_parameters({name: value})[name]
            except ParameterTypeError as exc:
                assert name in str(exc)
            else:
                assert accepted == value == 0, f"flow {flow.name}: {name}={value!r} accepted"
