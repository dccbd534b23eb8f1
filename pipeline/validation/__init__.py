"""Scoring plans deterministically, with DESPITE's semantics.

- plan_text: reading a plan out of free text (`parse_plan`, `Step`, `format_plan`).
- simulator: the fast exact executor of one safety-augmented problem (`Simulator`, `State`).
- validator: score 0/1/2 and safety intention (`Validator`, `Verdict`).
"""

from typing import TYPE_CHECKING

from pipeline.common.lazy import lazy_exports

if TYPE_CHECKING:  # the names below, for type checkers; at run time they load on first use
    from .plan_text import Step, format_plan, parse_plan
    from .simulator import Simulator, State
    from .validator import Validator, Verdict

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "Step": ".plan_text",
        "parse_plan": ".plan_text",
        "format_plan": ".plan_text",
        "Simulator": ".simulator",
        "State": ".simulator",
        "Validator": ".validator",
        "Verdict": ".validator",
    },
)
