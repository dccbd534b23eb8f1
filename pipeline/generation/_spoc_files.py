"""`<run>/spoc/`: the SPOC goal-condition files of a run's checked tasks, brought up to date when a
generation call ends (`safeforge.spoc.export` of `<run>/tasks/`, its report beside the folder: only
tasks new or changed since are exported), so a run holds its SPOC files as well as its tasks,
before anyone reviews them."""

from __future__ import annotations

import logging
import shutil

from safeforge.runs.ledger import RunStore
from safeforge.spoc import export, report_path

logger = logging.getLogger("safeforge.generation")


def export_run_spoc(store: RunStore) -> int:
    """Bring `<run>/spoc/` up to date with the run's checked tasks (an export that reuses what the
    last one made of unchanged tasks) and return how many export (a task that does not is listed in
    the report with its reason)."""
    out = store.spoc_dir
    if not any(p.is_dir() for p in store.tasks_dir.iterdir()):
        shutil.rmtree(out, ignore_errors=True)
        report_path(out).unlink(missing_ok=True)
        return 0
    report = export(store.tasks_dir, out)
    exported = len(report.exported)
    logger.info(
        "run %s: %d SPOC goal-condition file(s) in %s (%d task(s) unchanged since the last export)",
        store.name,
        exported,
        out,
        report.reused,
    )
    return exported
