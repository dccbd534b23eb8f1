"""PDDL handling and the safety-augmented format's rules.

- sexpr: a small s-expression reader for raw PDDL/BDDL text (`parse`, `to_text`, `unbalanced`).
- errors: `PDDLError`, naming file and line.
- bounds: the grounding size counted from the text (`grounding_size`, `too_large`).
- reader: our own reader of the task subset (`read_task`, `PDDLTask`), what scoring runs on;
  `read_all` goes on after an error to find every one.
- up_io: reading and writing PDDL with Unified Planning (`parse_problem`, `write_problem`,
  `expression_to_pddl`), for the checks and the planners.
- danger: the rules of the `(danger)` counter, on our reader's model (`analyse`, `DangerAnalysis`).
- basic: the basic problem's PDDL written from the safety text (`basic_pddl`), what a model sees.
- transforms: problems derived from a safety-augmented one (basic, safe, unsafe).
"""

from typing import TYPE_CHECKING

from safeforge.common.lazy import lazy_exports

if TYPE_CHECKING:  # the public names; at run time each loads on first use (lazy_exports reads this block)
    from .basic import basic_pddl
    from .bounds import grounding_size, too_large
    from .danger import DangerAnalysis, DangerEffect, analyse
    from .errors import PDDLError
    from .reader import DANGER, PDDLTask, Reading, read_all, read_task
    from .transforms import basic_problem, safe_problem, unsafe_problem
    from .up_io import expression_to_pddl, parse_problem, write_problem

__all__ = [
    "basic_pddl",
    "grounding_size",
    "too_large",
    "DangerAnalysis",
    "DangerEffect",
    "analyse",
    "PDDLError",
    "DANGER",
    "PDDLTask",
    "Reading",
    "read_all",
    "read_task",
    "basic_problem",
    "safe_problem",
    "unsafe_problem",
    "expression_to_pddl",
    "parse_problem",
    "write_problem",
]
__getattr__, __dir__ = lazy_exports(__name__)
