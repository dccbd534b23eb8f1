"""A run: its folder, the ledger of record states, and summaries of runs.

- ledger: `RunStore` (a run's folder), `RunLedger` (states and transitions), the state machine.
- lock: `RunLock`, one writer per run.
- overview: `run_overview`, `list_runs`, stage funnels and cost.
"""
from pipeline.common.lazy import lazy_exports

__getattr__, __dir__ = lazy_exports(__name__, {
    "RunStore": ".ledger", "RunLedger": ".ledger", "TransitionError": ".ledger", "RecordRow": ".ledger",
    "Transition": ".ledger", "STATES": ".ledger", "TERMINAL": ".ledger", "ALLOWED": ".ledger",
    "run_overview": ".overview", "list_runs": ".overview", "is_run": ".overview", "RunOverview": ".overview",
    "RunNotFound": ".overview", "RunLock": ".lock", "RunLocked": ".lock",
})
