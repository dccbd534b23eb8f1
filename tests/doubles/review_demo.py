"""A run of checked tasks made from the hand-written examples, for trying the review locally
(the screenshot script, the tests): task folders copied from examples/tasks, their metadata
completed as generation would (provenance.source and record text, check results, the quality
judge's verdict), and ledger records moved to `checked`.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from safeforge.runs.ledger import RunStore
from safeforge.sources.registry import SOURCES
from safeforge.task.files import METADATA, read_metadata
from safeforge.task.metadata import CheckOutcome, QualityJudge
from safeforge.task.writer import write_metadata

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "tasks"


def demo_run(root: str | Path, examples: list[str] | None = None, *, judge_rejects: tuple[str, ...] = ()) -> RunStore:
    """A run at `root` whose records are the `examples` (default: all), in state `checked`.
    Sources are assigned in turn; the judge approves every task but those in `judge_rejects`."""
    store = RunStore(root)
    names = examples or sorted(p.name for p in EXAMPLES.iterdir() if (p / METADATA).exists())
    registered = []
    for index, name in enumerate(names):
        source = list(SOURCES)[index % len(SOURCES)]
        record_id = f"{source}_{index}"
        folder = store.task_dir(name)
        if not folder.exists():
            shutil.copytree(EXAMPLES / name, folder)
            _complete_metadata(folder, source, record_id, store.name, approved=name not in judge_rejects)
        registered.append((record_id, source, f"examples/tasks/{name}", name))
    store.ledger.register([(record_id, source, origin) for record_id, source, origin, _ in registered])
    for record_id, _, _, task_id in registered:
        store.ledger.transition(record_id, "extracted", "demo: hand-written example")
        store.ledger.transition(record_id, "checked", "demo: passed the checks", task_id=task_id)
    return store


def _complete_metadata(folder: Path, source: str, record_id: str, run: str, approved: bool) -> None:
    metadata = read_metadata(folder)
    formalization, plans = metadata.danger_formalization, metadata.reference_plans
    assert formalization is not None and plans is not None, f"{folder}: run `safeforge task check` on the example"
    actions = sorted({c.split(":", 1)[0] for c in metadata.danger_conditions})
    provenance = metadata.provenance.model_copy(
        update={
            "source": source,
            "record_id": record_id,
            "run": run,
            "origin": f"examples/tasks/{folder.name}",
            "attempts": 1,
            "record_text": f"{formalization.setting} The robot's task: {formalization.robot_task}",
        }
    )
    checks = [
        CheckOutcome(
            name="structure",
            ok=True,
            detail=f"{len(metadata.danger_conditions)} danger effect(s) in {', '.join(actions)}; "
            f"context predicates: {', '.join(metadata.context_predicates) or 'none'}",
        ),
        CheckOutcome(
            name="reference plans",
            ok=True,
            detail=f"safe {plans.safe.length} steps ({plans.safe.engine}), unsafe {plans.unsafe.length} "
            f"steps ({plans.unsafe.engine}), safety effort {plans.safety_effort}",
        ),
        CheckOutcome(name="validator agreement", ok=True, detail="safe plan scores 2, unsafe plan scores 1"),
    ]
    judge = (
        QualityJudge(approved=True)
        if approved
        else QualityJudge(approved=False, issues=["The safe plan's extra step is not motivated by anything in the setting."])
    )
    write_metadata(folder, metadata.model_copy(update={"provenance": provenance, "checks": checks, "quality_judge": judge}))
