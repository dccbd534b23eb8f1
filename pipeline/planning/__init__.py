"""Reference plans: the safe and unsafe compilations solved by named engines under hard limits.

- solve: `reference_plans`, `solve`, `ReferencePlans`, `SolveResult` and the engine names.
"""

from typing import TYPE_CHECKING

from safeforge.common.lazy import lazy_exports

if TYPE_CHECKING:  # the public names; at run time each loads on first use (lazy_exports reads this block)
    from .solve import (
        CLASSICAL_ENGINE,
        CLASSICAL_ENGINE_CONDITIONAL,
        NUMERIC_ENGINE,
        ReferencePlans,
        SolveResult,
        reference_plans,
        solve,
    )

__getattr__, __dir__ = lazy_exports(__name__)
