"""PDDL handling and the safety-augmented format's rules.

- sexpr: a small s-expression reader for raw PDDL/BDDL text (`parse`, `to_text`, `danger_whens`).
- up_io: reading and writing PDDL with Unified Planning, errors naming file and line (`PDDLError`,
  `parse_problem`, `write_problem`, `expression_to_pddl`).
- danger: the rules of the `(danger)` counter (`DANGER`, `analyse`, `DangerAnalysis`).
- transforms: problems derived from a safety-augmented one (basic, safe, unsafe).
"""

from typing import TYPE_CHECKING

from pipeline.common.lazy import lazy_exports

if TYPE_CHECKING:  # the names below, for type checkers; at run time they load on first use
    from .danger import DANGER, DangerAnalysis, DangerEffect, analyse
    from .transforms import basic_problem, safe_problem, unsafe_problem
    from .up_io import PDDLError, expression_to_pddl, parse_problem, write_problem

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "PDDLError": ".up_io",
        "parse_problem": ".up_io",
        "write_problem": ".up_io",
        "expression_to_pddl": ".up_io",
        "DANGER": ".danger",
        "DangerAnalysis": ".danger",
        "DangerEffect": ".danger",
        "analyse": ".danger",
        "basic_problem": ".transforms",
        "safe_problem": ".transforms",
        "unsafe_problem": ".transforms",
    },
)
