"""Every number a user can give, found by walking what declares them (so a new one cannot escape):
the command line's options (every command's parser), the settings (the settings model) and the
flows' parameters (their signatures). Used by test_numbers.py and the fuzz test of the CLI."""

from __future__ import annotations

import argparse
import inspect
import types
import typing

import safeforge.flows.generate
import safeforge.flows.publish
import safeforge.flows.review
from safeforge.cli.main import COMMANDS, build_parser
from safeforge.common.ranges import Range
from safeforge.settings import Settings


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
        [commands] = [a for a in build_parser([command])._actions if isinstance(a, argparse._SubParsersAction)]
        walk(commands.choices[command], [command])
    return found


def _takes_number(action: argparse.Action) -> bool:
    default_number = isinstance(action.default, int | float) and not isinstance(action.default, bool)
    return action.type in (int, float) or isinstance(getattr(action.type, "range", None), Range) or default_number


NUMERIC_OPTIONS = [(words, action) for words, action in _options() if _takes_number(action)]
"""(the command's words, the option) of every option that takes a number."""


def option_id(words: list[str], action: argparse.Action) -> str:
    return f"{' '.join(words)} {action.option_strings[-1]}"


def _numeric(annotation) -> bool:
    return any(kind in (int, float) for kind in (annotation, *typing.get_args(annotation)))


NUMERIC_SETTINGS = [name for name, field in Settings.model_fields.items() if _numeric(field.annotation)]
"""The settings that are numbers."""


def variable(setting: str) -> str:
    """The environment variable of a setting."""
    return {field: variable for variable, field, _, _ in Settings.variables()}[setting].split(" or ")[0]


FLOWS = [
    value
    for module in (safeforge.flows.generate, safeforge.flows.publish, safeforge.flows.review)
    for value in vars(module).values()
    if type(value).__name__ == "Flow" and value.__module__ == module.__name__
]


def numeric_parameters(flow) -> list[str]:
    """The parameters of a flow that are numbers (its annotation an int or a float, maybe constrained or optional)."""
    hints = typing.get_type_hints(flow.fn, include_extras=True)
    names = []
    for name in inspect.signature(flow.fn).parameters:
        hint = hints[name]
        arms = typing.get_args(hint) if typing.get_origin(hint) in (typing.Union, types.UnionType) else (hint,)
        kinds = [typing.get_args(arm)[0] if typing.get_origin(arm) is typing.Annotated else arm for arm in arms]
        if any(kind in (int, float) for kind in kinds):
            names.append(name)
    return names
