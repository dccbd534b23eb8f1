"""Reference plans: the shortest safe and unsafe plans of a task, from the in-process search raced
against named planners under hard limits.

- race: `find_reference_plans` (the search alone for a head start, then the planners too).
- search: `shortest_plans`, breadth first over the task compiled by `grounding`, with `symmetry`.
- solve: `reference_plans`, `solve` (the planners), `ReferencePlans`, `SolveResult`, the engine names.
- pool, worker: the warm planner processes every solve runs in.
"""

from typing import TYPE_CHECKING

from safeforge.common.lazy import lazy_exports

if TYPE_CHECKING:  # the public names; at run time each loads on first use (lazy_exports reads this block)
    from .race import find_reference_plans
    from .search import shortest_plans
    from .solve import (
        CLASSICAL_ENGINE,
        CLASSICAL_ENGINE_CONDITIONAL,
        NUMERIC_ENGINE,
        ReferencePlans,
        SolveResult,
        reference_plans,
        solve,
    )

__all__ = [
    "find_reference_plans",
    "shortest_plans",
    "CLASSICAL_ENGINE",
    "CLASSICAL_ENGINE_CONDITIONAL",
    "NUMERIC_ENGINE",
    "ReferencePlans",
    "SolveResult",
    "reference_plans",
    "solve",
]
__getattr__, __dir__ = lazy_exports(__name__)
