"""The workbench's HTML: Jinja2 templates shipped with the package, every value escaped.

Autoescaping is on for every template and fragment, so text from a task (PDDL, an LLM's wording
in metadata.json, a folder's name) is shown as text and never becomes markup or script. The page
sections that change while an author edits are macros of `sections.html`; the page and the JSON
answers of the live check render them with the same code.
"""

from __future__ import annotations

from functools import cache
from typing import Any
from urllib.parse import quote

import jinja2
from markupsafe import Markup

from safeforge.common.resources import package_path

TEMPLATES = package_path("safeforge", "workbench", "templates")
STATIC = package_path("safeforge", "workbench", "static")
LIVE_SECTIONS = ("diagnostics", "checks", "model", "plans", "spoc")


def number(value: float | None) -> str:
    """A fluent's value as PDDL would write it: 1, not 1.0."""
    if value is None:
        return "undefined"
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def task_url(key: str) -> str:
    """The page of the task whose folder is named `key`."""
    return "/task/" + quote(key, safe="")


@cache
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["number"] = number
    env.globals["task_url"] = task_url
    return env


def section(name: str, **context: Any) -> Markup:
    """One macro of sections.html, rendered."""
    macro = getattr(environment().get_template("sections.html").module, name)
    return Markup(macro(**context))


def live_sections(**context: Any) -> dict[str, str]:
    """The sections a check changes, as HTML, by name."""
    return {name: str(section(name, **context)) for name in LIVE_SECTIONS}
