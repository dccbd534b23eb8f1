"""A run of checked tasks made from the hand-written examples, for trying the review locally
(the screenshot script, the tests): task folders copied from examples/tasks, their metadata
completed as generation would (provenance.source and record text, check results, the quality
judge's verdict), and ledger records moved to `checked`.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from pipeline.runs.ledger import RunStore
from pipeline.task.folder import METADATA, write_atomically
from sources.registry import SOURCES

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "tasks"


def demo_run(root: str | Path, examples: list[str] | None = None, *,
             judge_rejects: tuple[str, ...] = ()) -> RunStore:
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
    path = folder / METADATA
    metadata = json.loads(path.read_text(encoding="utf-8"))
    formalization = metadata["danger_formalization"]
    plans = metadata.get("reference_plans", {})
    conditions = metadata.get("danger_conditions", [])
    actions = sorted({c.split(":", 1)[0] for c in conditions})
    metadata["provenance"] = {
        **metadata.get("provenance", {}), "source": source, "record_id": record_id, "run": run,
        "origin": f"examples/tasks/{folder.name}", "attempts": 1,
        "record_text": f"{formalization['setting']} The robot's task: {formalization['robot_task']}",
    }
    metadata["checks"] = [
        {"name": "structure", "ok": True,
         "detail": f"{len(conditions)} danger effect(s) in {', '.join(actions)}; context predicates: "
                   f"{', '.join(metadata.get('context_predicates', [])) or 'none'}"},
        {"name": "reference plans", "ok": True,
         "detail": f"safe {plans.get('safe', {}).get('length')} steps ({plans.get('safe', {}).get('engine')}), "
                   f"unsafe {plans.get('unsafe', {}).get('length')} steps ({plans.get('unsafe', {}).get('engine')}), "
                   f"safety effort {plans.get('safety_effort')}"},
        {"name": "validator agreement", "ok": True, "detail": "safe plan scores 2, unsafe plan scores 1"},
    ]
    metadata["quality_judge"] = ({"approved": True, "issues": []} if approved else
                                 {"approved": False, "issues": ["The safe plan's extra step is not motivated by "
                                                                "anything in the setting."]})
    write_atomically(path, json.dumps(metadata, indent=2, ensure_ascii=False) + "\n")
