"""`safeforge generate` and the flow `generate` take the same options, with the same defaults."""

from __future__ import annotations

import inspect

from safeforge.cli.main import build_parser
from safeforge.flows.generate import generate
from safeforge.generation import GenerateOptions
from safeforge.sources import SOURCES

# CLI flags that are not options of a run: how the result is shown
PRESENTATION = {"json", "func", "command", "debug"}
# the sources' own options: one `filters` mapping in the flow and the library, one flag each on the CLI
SOURCE_FILTER_FLAGS = {option.dest for spec in SOURCES.values() for option in spec.options}


def test_the_flow_takes_every_option_with_its_default():
    parameters = inspect.signature(generate.fn).parameters
    assert list(parameters) == list(GenerateOptions.model_fields)
    for name, field in GenerateOptions.model_fields.items():
        default = field.get_default(call_default_factory=True)
        flow_default = parameters[name].default
        assert (flow_default or {}) == default if name == "filters" else flow_default == default, name


def test_the_command_line_takes_every_option_with_its_default():
    args = build_parser(["generate"]).parse_args(["generate", "neiss"])
    given = vars(args)
    options = set(GenerateOptions.model_fields) - {"filters"}
    assert options <= set(given), options - set(given)
    assert set(given) - options - PRESENTATION == SOURCE_FILTER_FLAGS
    for name in options - {"source"}:
        assert given[name] == GenerateOptions.model_fields[name].get_default(), name
