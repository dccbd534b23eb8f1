"""Reference plans: the safe and unsafe compilations solved by named engines under hard limits.

- solve: `reference_plans`, `solve`, `ReferencePlans`, `SolveResult` and the engine names.
"""

from typing import TYPE_CHECKING

from pipeline.common.lazy import lazy_exports

if TYPE_CHECKING:  # the names below, for type checkers; at run time they load on first use
    from .solve import (
        CLASSICAL_ENGINE,
        CLASSICAL_ENGINE_CONDITIONAL,
        NUMERIC_ENGINE,
        ReferencePlans,
        SolveResult,
        reference_plans,
        solve,
    )

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "ReferencePlans": ".solve",
        "SolveResult": ".solve",
        "reference_plans": ".solve",
        "solve": ".solve",
        "CLASSICAL_ENGINE": ".solve",
        "CLASSICAL_ENGINE_CONDITIONAL": ".solve",
        "NUMERIC_ENGINE": ".solve",
    },
)
