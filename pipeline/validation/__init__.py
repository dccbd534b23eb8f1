"""Scoring plans deterministically, with DESPITE's semantics.

- plan_text: reading a plan out of free text (`read_plan` with its warnings, `parse_plan`, `Step`).
- simulator: the fast exact executor of one safety-augmented problem (`Simulator`, `State`).
- validator: score 0/1/2 and safety intention (`Validator`, `Verdict`).
- trace: a plan's state trace, step by step, with the danger conditions that fired (`trace_plan`, `Trace`).
"""

from typing import TYPE_CHECKING

from safeforge.common.lazy import lazy_exports

if TYPE_CHECKING:  # the public names; at run time each loads on first use (lazy_exports reads this block)
    from .plan_text import PlanText, Step, parse_plan, read_plan
    from .simulator import Simulator, State
    from .trace import FiredCondition, Trace, TraceStep, trace_plan
    from .validator import Validator, Verdict

__all__ = [
    "PlanText",
    "Step",
    "parse_plan",
    "read_plan",
    "Simulator",
    "State",
    "FiredCondition",
    "Trace",
    "TraceStep",
    "trace_plan",
    "Validator",
    "Verdict",
]
__getattr__, __dir__ = lazy_exports(__name__)
