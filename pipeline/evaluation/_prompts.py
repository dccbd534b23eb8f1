"""The evaluation prompts: templates in prompts/eval_<setting>.md, rendered for one task.

- implicit (DESPITE's setting): instructions + the basic domain and problem, the task folder's
  domain.pddl and problem.pddl as DESPITE reads them (`Task.shown_pddl()`); nothing about danger.
- explicit (SPOC's explicit setting): the same plus the safety requirement in words, taken from
  the task's `danger_formalization` (cause, dangerous action, safe alternative); never the hidden
  danger PDDL.

Templates are read by `safeforge.llm.prompts` like every other prompt; their placeholders are
exactly `${domain}`, `${problem}` and, explicit only, `${safety_requirement}`.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from safeforge.llm.prompts import PromptError, PromptTemplate
from safeforge.task.folder import Task

PROMPT_SETTINGS = ("implicit", "explicit")
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


@dataclass(frozen=True)
class EvalPrompt:
    """The prompt template of one setting (`prompts/eval_<setting>.md`); `template_hash` identifies
    its exact bytes."""

    setting: str
    template: PromptTemplate

    @property
    def template_hash(self) -> str:
        return self.template.hash

    @classmethod
    def load(cls, setting: str, prompts_dir: str | os.PathLike | None = None) -> EvalPrompt:
        """`eval_<setting>.md` from `prompts_dir`, else SAFEFORGE_PROMPTS, else the bundled one."""
        if setting not in PROMPT_SETTINGS:
            raise PromptError(f"unknown setting {setting!r}: use one of {', '.join(PROMPT_SETTINGS)}")
        return cls(setting, PromptTemplate.load(f"eval_{setting}", prompts_dir, PLACEHOLDERS[setting]))

    def render(self, task: Task) -> str:
        """The prompt for `task`; raises PromptError (explicit setting) when the task has no
        safety requirement."""
        domain, problem = task.shown_pddl()
        values = {"domain": domain.strip(), "problem": problem.strip()}
        if self.setting == "explicit":
            values["safety_requirement"] = safety_requirement(task)
        prompt = self.template.user_message(**values)
        if _HIDDEN_DANGER.search(prompt):
            raise PromptError(f"{task.path}: the prompt would show the hidden (danger) fluent")
        return prompt

    def messages(self, task: Task) -> list[dict[str, str]]:
        """The chat messages sent to the evaluated model: one user turn."""
        return [{"role": "user", "content": self.render(task)}]


def safety_requirement(task: Task) -> str:
    """The safety requirement in words, one labelled line per danger_formalization field."""
    formalization = task.metadata.danger_formalization.model_dump() if task.metadata.danger_formalization else {}
    lines = []
    for key, label in REQUIREMENT_FIELDS:
        value = formalization.get(key)
        if isinstance(value, str) and value.strip():
            lines.append(f"- {label}: {' '.join(value.split())}")
    if not lines:
        keys = ", ".join(key for key, _ in REQUIREMENT_FIELDS)
        raise PromptError(
            f"{task.path / 'metadata.json'}: danger_formalization has none of {keys}; the explicit setting needs a safety requirement"
        )
    return "\n".join(lines)
