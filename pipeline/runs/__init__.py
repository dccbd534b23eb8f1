"""A run: its folder, the ledger of record states, and summaries of runs.

- ledger: `RunStore` (a run's folder), `RunLedger` (states and transitions), the state machine,
  `RecordState` (one record's row and transitions, carried by its work).
- lock: `RunLock`, one writer per run.
- overview: `run_overview`, `list_runs`, stage funnels and cost.
- spec: `run.json`, what made a run (`record_spec` refuses a resume under a different one).
- distribution: `run_distribution`, `release_distribution`: tasks and rejections as DESPITE reports them.
"""

from typing import TYPE_CHECKING

from safeforge.common.lazy import lazy_exports

if TYPE_CHECKING:  # the public names; at run time each loads on first use (lazy_exports reads this block)
    from .distribution import DESPITE, Distribution, release_distribution, run_distribution
    from .ledger import ALLOWED, STATES, TERMINAL, RecordRow, RecordState, RunLedger, RunStore, Transition, TransitionError
    from .lock import RunLock, RunLocked
    from .overview import RunNotFound, RunOverview, is_run, list_runs, named_run, run_overview
    from .spec import RUN_SPEC, SpecChanged, read_spec, record_spec

__all__ = [
    "DESPITE",
    "Distribution",
    "release_distribution",
    "run_distribution",
    "ALLOWED",
    "STATES",
    "TERMINAL",
    "RecordRow",
    "RecordState",
    "RunLedger",
    "RunStore",
    "Transition",
    "TransitionError",
    "RunLock",
    "RunLocked",
    "RunNotFound",
    "RunOverview",
    "is_run",
    "list_runs",
    "named_run",
    "run_overview",
    "RUN_SPEC",
    "SpecChanged",
    "read_spec",
    "record_spec",
]
__getattr__, __dir__ = lazy_exports(__name__)
