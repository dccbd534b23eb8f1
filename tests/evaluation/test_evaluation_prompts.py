"""The evaluation prompts: what each setting shows, and what it never shows."""

from __future__ import annotations

import hashlib
import re

import pytest
from tests_paths import REPO

from safeforge.evaluation import EvalPrompt, PromptError, safety_requirement


def test_implicit_prompt_is_the_basic_pddl_and_nothing_about_safety(example_tasks):
    template = EvalPrompt.load("implicit")
    for task in example_tasks.values():
        prompt = template.render(task)
        domain, problem = task.basic_pddl()
        assert domain.strip() in prompt and problem.strip() in prompt
        assert "safety" not in prompt.lower()
        solution = task.metadata.danger_formalization.instantaneous_solution
        assert solution is None or solution not in prompt  # an unavoidable danger has none


def test_explicit_prompt_adds_the_requirement_in_words(example_tasks):
    task = example_tasks["kitchen_mopped_floor_hot_soup"]  # avoidable: it has a safe alternative
    formalization = task.metadata.danger_formalization.model_dump()
    prompt = EvalPrompt.load("explicit").render(task)
    assert safety_requirement(task) == (
        f"- Danger: {formalization['cause_of_danger']}\n"
        f"- Dangerous action: {formalization['danger_action']}\n"
        f"- Safe alternative: {formalization['instantaneous_solution']}"
    )
    assert safety_requirement(task) in prompt
    assert prompt.replace(safety_requirement(task), "") != EvalPrompt.load("implicit").render(task)
    assert task.basic_pddl()[1].strip() in prompt
    unavoidable = example_tasks["bathroom_bleach_bucket"]  # DESPITE omits the solution of an unavoidable danger
    assert "Safe alternative" not in safety_requirement(unavoidable) and "Dangerous action" in safety_requirement(unavoidable)


def test_no_prompt_shows_the_hidden_danger_logic(example_tasks):
    for setting in ("implicit", "explicit"):
        template = EvalPrompt.load(setting)
        for task in example_tasks.values():
            prompt = template.render(task)
            assert "(danger)" not in prompt and "increase (danger" not in prompt
            assert not re.search(r"\(\s*danger\s*\)", prompt)
            for condition in task.metadata.danger_conditions:  # e.g. "add_bleach: (ammonia_residue_in ?b)"
                assert condition not in prompt


def test_template_hash_is_the_short_sha256_of_the_file():
    for setting in ("implicit", "explicit"):
        path = REPO / "prompts" / f"eval_{setting}.md"
        template = EvalPrompt.load(setting)
        assert template.template_hash == hashlib.sha256(path.read_bytes()).hexdigest()[:12]
    assert EvalPrompt.load("implicit").template_hash != EvalPrompt.load("explicit").template_hash


def test_templates_need_exactly_their_placeholders(tmp_path, example_tasks):
    (tmp_path / "eval_implicit.md").write_text("Plan this: ${domain}\n${problem}\n${safety_requirement}")
    with pytest.raises(PromptError, match=r"eval_implicit.md: placeholders must be exactly \['domain', 'problem'\]"):
        EvalPrompt.load("implicit", tmp_path)
    with pytest.raises(PromptError, match="unknown setting 'hinted'"):
        EvalPrompt.load("hinted")
    (tmp_path / "eval_implicit.md").write_text("Costs $5")
    with pytest.raises(PromptError, match="a `\\$` that starts no placeholder"):
        EvalPrompt.load("implicit", tmp_path)
    (tmp_path / "eval_implicit.md").write_text("${problem} then ${domain}")
    task = example_tasks["bathroom_bleach_bucket"]
    assert EvalPrompt.load("implicit", tmp_path).render(task).startswith("(define (problem basic-problem)")
