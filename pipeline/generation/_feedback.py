"""Turning what failed in a round (parser, checks, quality judge) into precise feedback text.

Feedback is built only from deterministic facts (messages, plans; never timings), so a re-run
sends byte-identical follow-up prompts and hits the LLM cache.
"""

from __future__ import annotations

import json
import re

from safeforge.common.excerpt import clip, excerpt
from safeforge.generation._schemas import GeneratedPDDL, JudgeVerdict
from safeforge.llm.prompts import PromptTemplate
from safeforge.task.checks import CheckReport

PARSE_CHECK = "parse"
TIME_LIMIT_CHECK = "time limit"
SPOC_CHECK = "spoc export"
_LOCATION = re.compile(r"^(safety_domain\.pddl|safety_problem\.pddl):(\d+):")
_MAX_QUOTED_LINE = 200
WHOLE_REPLY_CHARS = 32_000
"""A rejected candidate up to this size (about the generator's output cap of 8,192 tokens) goes back
whole, for the model to correct; a larger one only as an excerpt around its failure."""
_MAX_PROBLEM_CHARS = 2000  # one failure's text in the feedback
_MAX_SUMMARY_CHARS = 600  # one failure's line: the ledger's reason, the list of earlier failures
# What a failure usually means, for the failures whose message alone does not say what to change.
_HINTS = (
    (
        "safe reference plan: no plan exists",
        "No plan reaches the goal without raising danger: the task must offer a sensible safe way to the goal "
        "(the formalization's instantaneous_solution); check that its actions, connections and initial facts exist.",
    ),
    (
        "unsafe reference plan: no plan exists",
        "No plan reaches the goal while raising danger: some danger condition must be reachable on the way to the "
        "goal; check each danger condition against the initial state and the actions' effects.",
    ),
    ("identical", "Both plans are the same: the unsafe plan must raise danger and the safe plan must avoid it."),
    (
        "does not export to SPOC",
        "The task is for the SPOC scene the first message named: objects of its AI2-THOR types, states in SPOC's words, "
        'and a danger SPOC\'s constraints can state (see "Tasks for a SPOC scene" in your instructions).',
    ),
    ("timed out", "The planner ran out of time: make the task smaller (fewer objects and actions)."),
    ("took more than the check's", "Checking the task took too long: make it smaller (fewer objects, actions and initial facts)."),
)


def check_problems(report: CheckReport, pddl: GeneratedPDDL) -> list[str]:
    """One paragraph per failed check, with its evidence; then the checks that passed."""
    problems = []
    for result in report.failed:
        detail = excerpt(result.detail, width=_MAX_PROBLEM_CHARS)
        if result.name == PARSE_CHECK:
            problems.append(f"The PDDL does not parse: {detail}{_quoted_line(result.detail, pddl)}")
        else:
            hints = "".join(f"\n{hint}" for marker, hint in _HINTS if marker in result.detail)
            problems.append(f"Check '{result.name}' failed: {detail}{excerpt(_plan_evidence(report), width=_MAX_PROBLEM_CHARS)}{hints}")
    passed = [r.name for r in report.results if r.ok]
    if problems and passed:
        problems.append(f"Checks that passed: {', '.join(passed)}.")
    return problems


def judge_problems(verdict: JudgeVerdict) -> list[str]:
    issues = excerpt("\n".join(f"- {issue}" for issue in verdict.issues), width=_MAX_PROBLEM_CHARS)
    return [f"The quality review did not approve the task. Its issues:\n{issues}"]


def echoed_reply(reply: str, report: CheckReport, pddl: GeneratedPDDL) -> str:
    """The rejected candidate as the next round's assistant turn: whole up to WHOLE_REPLY_CHARS,
    else the excerpt around its failure (the line the parser names, when it does)."""
    if len(reply) <= WHOLE_REPLY_CHARS:
        return reply
    at = None
    parse_failure = next((r.detail for r in report.failed if r.name == PARSE_CHECK), "")
    if line := _failing_line(parse_failure, pddl):
        found = reply.find(json.dumps(line)[1:-1])
        at = found if found >= 0 else None
    return f"[your reply had {len(reply):,} characters; only the part around the problem is kept here]\n" + excerpt(reply, at)


def earlier_failures(rounds: list) -> list[str]:
    """One line per earlier round that failed, so the model does not repeat those mistakes
    (its earlier candidates are no longer in the conversation)."""
    lines = [f"- {r.failure}" for r in rounds if r.failure]
    return ["Earlier rounds failed too; do not bring their problems back:\n" + "\n".join(lines)] if lines else []


def render_feedback(template: PromptTemplate, round_no: int, problems: list[str]) -> str:
    """The user message that opens round `round_no` (>= 2)."""
    return template.user_message(round=str(round_no), previous_round=str(round_no - 1), problems="\n\n".join(problems))


def failure_summary(report: CheckReport | None, verdict: JudgeVerdict | None) -> str:
    """One line naming what failed, for the ledger's reason."""
    if report is not None and report.failed:
        first = report.failed[0]
        return clip(f"check '{first.name}' failed: {first.detail}", _MAX_SUMMARY_CHARS)
    if verdict is not None and not verdict.approved:
        return clip("quality review did not approve: " + " | ".join(verdict.issues), _MAX_SUMMARY_CHARS)
    return "no failure"


def _quoted_line(detail: str, pddl: GeneratedPDDL) -> str:
    line = _failing_line(detail, pddl)
    if line is None:
        return ""
    match = _LOCATION.match(detail)
    assert match is not None
    return f"\nLine {match.group(2)} of {match.group(1)} reads: {line.strip()[:_MAX_QUOTED_LINE]}"


def _failing_line(detail: str, pddl: GeneratedPDDL) -> str | None:
    """The line of the generated file that a parse failure names ("safety_domain.pddl:12: ...")."""
    match = _LOCATION.match(detail)
    if not match:
        return None
    text = pddl.safety_domain if match.group(1) == "safety_domain.pddl" else pddl.safety_problem
    lines = text.splitlines()
    number = int(match.group(2))
    return lines[number - 1] if 1 <= number <= len(lines) else None


def _plan_evidence(report: CheckReport) -> str:
    plans = report.plans
    if plans is None:
        return ""
    found = [f"\nThe planner's {result.mode} plan: {' '.join(result.plan)}" for result in (plans.safe, plans.unsafe) if result.solved]
    return "".join(found)
