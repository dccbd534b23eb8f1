"""`<run>/spoc/`: the SPOC goal-condition files of a run's checked tasks, written when a generation
call ends (`safeforge.spoc.export` of `<run>/tasks/`, its report beside the folder), so a run holds
its SPOC files as well as its tasks, before anyone reviews them."""

from __future__ import annotations

import logging
import shutil

from safeforge.runs.ledger import RunStore
from safeforge.spoc import export, report_path

logger = logging.getLogger("safeforge.generation")


def export_run_spoc(store: RunStore) -> int:
    """Export the run's checked tasks into `<run>/spoc/`, replacing what an earlier call wrote, and
    return how many export (a task that does not is listed in the report with its reason)."""
    out = store.spoc_dir
    shutil.rmtree(out, ignore_errors=True)
    report_path(out).unlink(missing_ok=True)
    if not any(p.is_dir() for p in store.tasks_dir.iterdir()):
        return 0
    exported = len(export(store.tasks_dir, out).exported)
    logger.info("run %s: %d SPOC goal-condition file(s) in %s", store.name, exported, out)
    return exported
