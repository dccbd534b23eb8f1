"""Reference plans: the safe and unsafe compilations solved by named engines under hard limits.

- solve: `reference_plans`, `solve`, `ReferencePlans`, `SolveResult` and the engine names.
"""
from pipeline.common.lazy import lazy_exports

__getattr__, __dir__ = lazy_exports(__name__, {
    "ReferencePlans": ".solve", "SolveResult": ".solve", "reference_plans": ".solve", "solve": ".solve",
    "CLASSICAL_ENGINE": ".solve", "CLASSICAL_ENGINE_CONDITIONAL": ".solve", "NUMERIC_ENGINE": ".solve",
})
