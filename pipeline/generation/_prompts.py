"""The generation stages' prompt templates (`prompts/*.md`, read through `safeforge.llm.prompts`)."""

from __future__ import annotations

import os
from dataclasses import dataclass

from safeforge.llm.prompts import PromptTemplate

EXTRACT = "extract_danger"
GENERATE = "generate_pddl"
FEEDBACK = "feedback"
JUDGE = "judge_task"


@dataclass(frozen=True)
class PromptSet:
    """The templates of one run."""

    extract: PromptTemplate
    generate: PromptTemplate
    feedback: PromptTemplate
    judge: PromptTemplate

    def hashes(self) -> dict[str, str]:
        return {"extract": self.extract.hash, "generate": self.generate.hash, "feedback": self.feedback.hash, "judge": self.judge.hash}


def load_prompts(directory: str | os.PathLike | None = None) -> PromptSet:
    """The four templates; the extractor's, generator's and judge's must have a system prompt."""
    return PromptSet(
        PromptTemplate.load(EXTRACT, directory).require_system(),
        PromptTemplate.load(GENERATE, directory).require_system(),
        PromptTemplate.load(FEEDBACK, directory),
        PromptTemplate.load(JUDGE, directory).require_system(),
    )
