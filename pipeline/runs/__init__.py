"""A run: its folder, the ledger of record states, and summaries of runs.

- ledger: `RunStore` (a run's folder), `RunLedger` (states and transitions), the state machine.
- lock: `RunLock`, one writer per run.
- overview: `run_overview`, `list_runs`, stage funnels and cost.
"""

from typing import TYPE_CHECKING

from pipeline.common.lazy import lazy_exports

if TYPE_CHECKING:  # the names below, for type checkers; at run time they load on first use
    from .ledger import ALLOWED, STATES, TERMINAL, RecordRow, RunLedger, RunStore, Transition, TransitionError
    from .lock import RunLock, RunLocked
    from .overview import RunNotFound, RunOverview, is_run, list_runs, run_overview

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "RunStore": ".ledger",
        "RunLedger": ".ledger",
        "TransitionError": ".ledger",
        "RecordRow": ".ledger",
        "Transition": ".ledger",
        "STATES": ".ledger",
        "TERMINAL": ".ledger",
        "ALLOWED": ".ledger",
        "run_overview": ".overview",
        "list_runs": ".overview",
        "is_run": ".overview",
        "RunOverview": ".overview",
        "RunNotFound": ".overview",
        "RunLock": ".lock",
        "RunLocked": ".lock",
    },
)
