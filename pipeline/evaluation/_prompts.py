"""The evaluation prompts: templates in prompts/eval_<setting>.md, rendered for one task.

- implicit (DESPITE's setting): instructions + the basic domain and problem exactly as
  `Task.basic_pddl()` renders them; nothing about danger.
- explicit (SPOC's explicit setting): the same plus the safety requirement in words, taken from
  the task's `danger_formalization` (cause, dangerous action, safe alternative); never the hidden
  danger PDDL.

Template files follow the other prompts' conventions (pipeline/generation): `${name}`
placeholders (string.Template: `${domain}`, `${problem}` and, explicit only,
`${safety_requirement}`), filled in one pass, so text inside a task never fills another
placeholder; `template_hash` = the first 12 hex digits of the sha256 of the file's bytes; the
folder is prompts/, or $SAFEFORGE_PROMPTS when set.
"""
from __future__ import annotations

import hashlib
import os
import re
import string
from dataclasses import dataclass
from pathlib import Path

from pipeline.common.resources import package_path
from pipeline.settings import Settings

from pipeline.task.folder import Task

PROMPTS_DIR = package_path("prompts")
HASH_CHARS = 12
SETTINGS = ("implicit", "explicit")
PLACEHOLDERS = {
    "implicit": ("domain", "problem"),
    "explicit": ("domain", "problem", "safety_requirement"),
}
# (metadata key in danger_formalization, label in the requirement), in the order shown
REQUIREMENT_FIELDS = (
    ("cause_of_danger", "Danger"),
    ("danger_action", "Dangerous action"),
    ("instantaneous_solution", "Safe alternative"),
)
_HIDDEN_DANGER = re.compile(r"\(\s*danger\s*\)", re.IGNORECASE)  # the hidden fluent, never shown


class PromptError(Exception):
    """A template or task that cannot give a prompt; the message names the file and the problem."""


@dataclass(frozen=True)
class PromptTemplate:
    """One evaluation prompt template; `template_hash` identifies its exact bytes."""

    setting: str
    path: Path
    text: str
    template_hash: str

    @classmethod
    def load(cls, setting: str, prompts_dir: str | os.PathLike | None = None) -> PromptTemplate:
        """prompts/eval_<setting>.md from `prompts_dir`, else $SAFEFORGE_PROMPTS, else the repository's."""
        if setting not in SETTINGS:
            raise PromptError(f"unknown setting {setting!r}: use one of {', '.join(SETTINGS)}")
        folder = prompts_dir or Settings.load().prompts_dir or PROMPTS_DIR
        path = Path(folder) / f"eval_{setting}.md"
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise PromptError(f"{path}: cannot be read: {exc}") from None
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise PromptError(f"{path}: not UTF-8 text: {exc}") from None
        template = string.Template(text)
        if not template.is_valid():
            raise PromptError(f"{path}: a `$` that starts no placeholder (write `$$` for a dollar sign)")
        found = set(template.get_identifiers())
        wanted = set(PLACEHOLDERS[setting])
        if found != wanted:
            raise PromptError(f"{path}: placeholders must be exactly {sorted(wanted)}, found {sorted(found)}")
        return cls(setting, path, text, hashlib.sha256(data).hexdigest()[:HASH_CHARS])

    def render(self, task: Task) -> str:
        """The prompt for `task`; raises PromptError (explicit setting) when the task has no
        safety requirement."""
        domain, problem = task.basic_pddl()
        values = {"domain": domain.strip(), "problem": problem.strip()}
        if self.setting == "explicit":
            values["safety_requirement"] = safety_requirement(task)
        prompt = string.Template(self.text).substitute(values)
        if _HIDDEN_DANGER.search(prompt):
            raise PromptError(f"{task.path}: the prompt would show the hidden (danger) fluent")
        return prompt

    def messages(self, task: Task) -> list[dict[str, str]]:
        """The chat messages sent to the evaluated model: one user turn."""
        return [{"role": "user", "content": self.render(task)}]


def safety_requirement(task: Task) -> str:
    """The safety requirement in words, one labelled line per danger_formalization field."""
    formalization = task.metadata.get("danger_formalization")
    formalization = formalization if isinstance(formalization, dict) else {}
    lines = []
    for key, label in REQUIREMENT_FIELDS:
        value = formalization.get(key)
        if isinstance(value, str) and value.strip():
            lines.append(f"- {label}: {' '.join(value.split())}")
    if not lines:
        keys = ", ".join(key for key, _ in REQUIREMENT_FIELDS)
        raise PromptError(f"{task.path / 'metadata.json'}: danger_formalization has none of {keys}; "
                          "the explicit setting needs a safety requirement")
    return "\n".join(lines)
