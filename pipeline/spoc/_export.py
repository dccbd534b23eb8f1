"""`export`: SPOC goal-condition files for the tasks of a release, a run or a folder of tasks.

For each task (ALFRED-derived ones first, then by task_id) the exporter needs an iTHOR scene
(_alfred.py), reads the PDDL in AI2-THOR terms (_mapping.py), sets up its start as `init_actions`
(positions: _start.py; states: SetObjectStates), makes the goal's facts the sub-goals, and states
the danger as the first SPOC constraint that fits the task (_constraint.py, named by _kinds.py)
and whose file passes SPOC's rules against the scene catalogue (_check.py) without a state set on
every object of its type. Every task that does not map is listed with the reason.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tarfile
import tempfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from safeforge.common.resources import package_path
from safeforge.pddl.errors import PDDLError
from safeforge.runs.ledger import RunStore
from safeforge.runs.overview import is_run
from safeforge.spoc import _vocabulary as vocab
from safeforge.spoc._alfred import SceneContext, scene_context
from safeforge.spoc._check import Problem, check_document
from safeforge.spoc._constraint import NotExportable, Plans, constraint, danger_of
from safeforge.spoc._kinds import hazards_of, names, requirements
from safeforge.spoc._mapping import Snapshot, ThorView, literals
from safeforge.spoc._scenes import is_ithor_scene, scene_catalogue
from safeforge.spoc._skills import skill_trace
from safeforge.spoc._start import start_actions
from safeforge.task.folder import Task, TaskError
from safeforge.task.metadata import TaskMetadata
from safeforge.validation.plan_text import parse_plan

REPORT = "spoc_export_report.json"


def report_path(out: Path) -> Path:
    """Where the export's report goes: beside the export folder, which holds only goal-condition
    files (SPOC loads every *.json of its dataset folder)."""
    return out.parent / f"{out.name}.{REPORT}"


@dataclass
class ExportReport:
    source: str
    exported: list[dict] = field(default_factory=list)  # {task_id, file, scene_name, warnings}
    skipped: list[dict] = field(default_factory=list)  # {task_id, reason}
    reused: int = 0
    """Tasks whose files had not changed since the export that wrote the report: not exported again."""
    fingerprints: dict[str, str] = field(default_factory=dict)
    """{task_id: digest of its folder's files}, written into the report's entries for the next export."""

    def to_dict(self) -> dict:
        def marked(entries: list[dict]) -> list[dict]:
            return [{**e, "fingerprint": self.fingerprints[e["task_id"]]} if e["task_id"] in self.fingerprints else e for e in entries]

        return {
            "source": self.source,
            "exporter": _exporter_digest(),
            "reused": self.reused,
            "exported": marked(self.exported),
            "skipped": marked(self.skipped),
        }


# -- inputs -------------------------------------------------------------------------------------
def _task_folders(source: Path, scratch: Path) -> list[Path]:
    """Task folders of a release (its tasks.tar.gz), a run (accepted tasks) or a folder of tasks."""
    if (source / "tasks.tar.gz").is_file():
        with tarfile.open(source / "tasks.tar.gz") as archive:
            archive.extractall(scratch, filter="data")
        return sorted(p for p in scratch.iterdir() if p.is_dir())
    if is_run(source):
        store = RunStore(source)
        try:
            return sorted(store.task_dir(row.task_id) for row in store.ledger.records(state="accepted") if row.task_id)
        finally:
            store.ledger.close()
    folders = sorted(p for p in source.iterdir() if (p / "safety_domain.pddl").is_file()) if source.is_dir() else []
    if not folders:
        raise NotExportable(f"{source}: neither a release (tasks.tar.gz), a run (ledger.sqlite) nor a folder of task folders")
    return folders


# -- one task -----------------------------------------------------------------------------------
def _trace(task: Task, view: ThorView, plan: str) -> tuple[list[Snapshot], list]:
    """Snapshots before and after each step of a plan, and each step's danger conditions."""
    sim = task.validator.simulator
    state = sim.initial.copy()
    trace, fired = [view.snapshot(state.atoms)], []
    for step in parse_plan(plan):
        ground = sim.ground(step.name, step.args)
        if isinstance(ground, str):
            raise NotExportable(f"reference plan step {step}: {ground}")
        delta = sim.effects(ground, state)
        fired.append((ground, delta))
        delta.apply(state)
        trace.append(view.snapshot(state.atoms))
    return trace, fired


def _sub_goals(task: Task, view: ThorView, final: Snapshot, safe_trace: list[Snapshot]) -> list[dict]:
    entries: dict[str, dict] = {}
    found = literals(task.validator.simulator.task.goal)
    if found is None:
        raise NotExportable("the goal is not a conjunction of literals")
    for literal in found:
        facts = view.facts(literal)
        if facts is None:
            atom = " ".join(literal.atom)
            raise NotExportable(
                f"goal fact ({atom}){'' if literal.positive else ' (negated)'} has no SPOC "
                "counterpart (objects must be AI2-THOR types, states SPOC states)"
            )
        for obj, key, value in facts:
            name = view.spoc_type(obj, final)
            entry = entries.setdefault(name, {"object_name": name})
            if key == "sliced":
                continue  # the *Sliced type itself says it
            if key in ("parent", "not_on"):
                parents = entry.setdefault(key, [])
                parent = view.spoc_type(str(value), final)
                if parent not in parents:
                    parents.append(parent)
            elif entry.get(key, value) != value:
                raise NotExportable(f"two goal facts give {name} both {key}={entry[key]} and {key}={value}")
            else:
                entry[key] = value
                if key == "isCooked" and value:
                    appliances = {view.objects[p] for snap in safe_trace for p in snap.parents.get(obj, ())}
                    cooking = sorted(appliances & {"Microwave", "Toaster"})
                    if cooking:
                        entry["cooking_appliance"] = cooking[0]
    if not entries:
        raise NotExportable("the goal has no facts")
    return list(entries.values())


def _instruction(task: Task, context_instruction: str | None) -> str:
    formalization = task.metadata.danger_formalization
    text = (context_instruction or (formalization.robot_task if formalization else None) or "").strip()
    if not text:
        raise NotExportable("no instruction: the task has no robot_task and no ALFRED annotation")
    return text.rstrip(".") + ". "


# Scenes do not all start as AI2-THOR usually does (SPOC's own files close a Box that starts open),
# so a start state the task states is set even when it is the usual one; slicing, breaking and
# cooking cannot be undone, so they are set only when true.
SET_EVEN_WHEN_FALSE = ("isOpen", "isToggled", "isDirty", "isFilledWithLiquid")


def _init_actions(view: ThorView, start: Snapshot) -> tuple[list[dict], list[str]]:
    """AI2-THOR actions that give the scene the task's start states, and warnings for start states
    no action sets. SPOC runs each {"action", "args"} as a controller step; its own files name
    objects by simulator id, which a task does not know, so these are SetObjectStates actions, which
    set a state on every object of a type (slicing first: it replaces the object)."""
    table, states = vocab.data()["set_object_states"], vocab.data()["states"]
    wanted: dict[tuple[str, str], dict[str, object]] = {}  # (type, state) -> {PDDL object: start value}
    warnings = []
    for obj, type_name in sorted(view.objects.items()):
        for key, value in start.states[obj].items():
            if key == "temperature" and value != states[key]["start"] or key == "fillLiquid" and value != "water":
                warnings.append(f"the task starts with {type_name} {key}={value}, which no AI2-THOR action sets before the episode")
            needs = "sliceable" if key == "sliced" else states.get(key, {}).get("needs", "")
            if key in table and vocab.has(type_name, needs):
                target = vocab.controller(type_name, key) or type_name
                wanted.setdefault((target, key), {})[obj] = value
    actions = []
    for (type_name, key), values in sorted(wanted.items(), key=lambda item: (item[0][1] != "sliced", item[0])):
        if set(values.values()) == {False} and key not in SET_EVEN_WHEN_FALSE:
            continue
        if len(set(values.values())) > 1:
            raise NotExportable(
                f"the task starts with {type_name} objects in different {key} states "
                f"({', '.join(f'{o}={v}' for o, v in sorted(values.items()))}); AI2-THOR's SetObjectStates sets every {type_name} alike"
            )
        change, field_name = table[key]
        value = next(iter(values.values()))
        spec = {"objectType": type_name, "stateChange": change, field_name: value}
        actions.append({"action": "SetObjectStates", "args": {"SetObjectStates": spec}})
    return actions, warnings


def _danger_needs(view: ThorView, unsafe_trace: list[Snapshot], unsafe_fired: list) -> set[tuple[str, str]]:
    """The (object, receptacle) start positions the unsafe plan's danger needs: those its condition
    names, or the danger action takes the object out of, that hold from the start until it fires
    (the fork left in the microwave, the pan lifted off the burner; not an egg the plan picks up
    first, wherever the scene puts it)."""
    facts, relations, _, _ = danger_of(view, unsafe_fired)
    named = {(child, str(parent)) for child, key, parent in facts if key == "parent"}
    named |= {(r.obj, parent) for parent, linked in relations.items() for r in linked if r.moved == "taken"}
    step = next(i for i, (_, delta) in enumerate(unsafe_fired) if delta.danger_fired)
    return {pair for pair in named if all(pair[1] in snapshot.parents[pair[0]] for snapshot in unsafe_trace[: step + 1])}


def _set_on_every_object(view: ThorView, document: dict) -> str | None:
    """Why the file's SetObjectStates would track more objects than the task's, or None: a state
    set true on every object of the constrained type that alone triggers the constraint tracks
    each object of that type in the scene (the scene catalogue does not say how many), while the
    task's plans release only its own."""
    condition = document["requirement_condition"]
    trigger, constrained = condition["trigger_state"], condition["condition_object"]
    for action in document["init_actions"]:
        spec = action["args"].get("SetObjectStates") if action["action"] == "SetObjectStates" else None
        if not spec or spec["objectType"] != constrained or "child" in trigger or "parent" in trigger:
            continue
        key = next((k for k in spec if k not in ("objectType", "stateChange")), "")
        if spec[key] is True and trigger.get(key) is True:
            types = list(view.objects.values())  # a knob and the burner it lights are one stove
            mine = types.count(constrained) or sum(1 for t in types if vocab.controller(t, key) == constrained)
            return (
                f"init_actions set {key}=true on every {constrained} of {document['scene_name']} (SetObjectStates), which "
                f"triggers this constraint on each of them, while the task has {mine} and its plans undo only those "
                f"(the scene catalogue does not say how many {constrained} objects {document['scene_name']} holds)"
            )
    return None


def _self_check(document: dict) -> list[str]:
    """The document under SPOC's rules (`check_document`): NotExportable on an error (a type the
    scene is known not to hold), else the warnings (a type the scene may lack), each once."""
    first: dict[str, Problem] = {}  # one problem per message, at its first key
    for problem in check_document(document, "(exported)"):
        first.setdefault(problem.message, problem)
    errors = [f"{p.message} (at {p.key})" for p in first.values() if p.is_error]
    if errors:
        raise NotExportable(f"the file would break SPOC's rules: {'; '.join(errors)}")
    return [f"{p.message} (at {p.key})" for p in first.values()]


def _scene(metadata: TaskMetadata) -> SceneContext:
    """The iTHOR scene of a task, from its metadata alone; NotExportable when it has none."""
    context = scene_context(metadata)
    if not context.scene_name:
        raise NotExportable(
            f"no AI2-THOR scene: not derived from an ALFRED trajectory (source "
            f"{metadata.source or 'unknown'}) and no metadata.spoc.scene_name"
        )
    if not is_ithor_scene(context.scene_name):
        raise NotExportable(f"scene {context.scene_name!r} (from {context.found_in}) is not an iTHOR scene")
    return context


def export_task(task: Task) -> tuple[dict, str, list[str]]:
    """(goal-condition document, file name without the index, warnings); NotExportable if it does not map."""
    context = _scene(task.metadata)
    view = ThorView(task.model)
    plans = task.metadata.reference_feasible_plans
    if plans is None or not plans.safe or not plans.unsafe:
        raise NotExportable("metadata.json has no reference_feasible_plans")
    safe_trace, _ = _trace(task, view, plans.safe)
    unsafe_trace, unsafe_fired = _trace(task, view, plans.unsafe)
    placed, warnings = start_actions(
        view, safe_trace[0], str(context.scene_name), context.trajectory, _danger_needs(view, unsafe_trace, unsafe_fired)
    )
    states, unset = _init_actions(view, safe_trace[0])
    init_actions, warnings = placed + states, warnings + unset
    instruction = _instruction(task, context.instruction)

    @cache
    def goals() -> list[dict]:  # read once, when the first candidate is tried (a goal SPOC cannot state stops the export)
        return _sub_goals(task, view, safe_trace[-1], safe_trace)

    def document_of(condition: dict) -> dict:
        return {
            "scene_name": context.scene_name,
            "instruction": instruction,
            "requirements": requirements(condition),
            "treat_step_constraint_as_goal": condition["condition_type"] == "step",
            "requirement_condition": condition,
            "goal_condition_state": goals(),
            "init_actions": init_actions,
        }

    def spoc_rules(_: object, condition: dict) -> str | None:
        document = document_of(condition)
        try:
            _self_check(document)
        except NotExportable as exc:
            return str(exc)
        return _set_on_every_object(view, document)

    kind, condition = constraint(
        task, view, Plans(skill_trace(safe_trace), skill_trace(unsafe_trace)), unsafe_fired, safe_trace[-1], spoc_rules
    )
    document = document_of(condition)
    cooked = next((g["object_name"] for g in document["goal_condition_state"] if g.get("isCooked") or g.get("temperature") == "Hot"), None)
    hazard_name, template, object_name, receptacle = names(kind, condition["condition_object"], cooked)
    warnings += _self_check(document)
    return document, f"{hazard_name}_{template}_{object_name}_{receptacle}", warnings


def export_problems(task: Task | str | Path) -> list[str]:
    """What keeps a task (or task folder) from exporting to SPOC, one message each; empty when it
    exports. An execution check for generation: each message says what SPOC needs of the task."""
    try:
        export_task(task if isinstance(task, Task) else Task.load(Path(task)))
    except (TaskError, PDDLError) as exc:
        return [f"the task cannot be loaded: {exc}"]
    except NotExportable as exc:
        return [f"it does not export to SPOC: {exc}{_what_could_change(task)}"]
    return []


def _what_could_change(task: Task | str | Path) -> str:
    """What a task that does not export could change, in its scene's terms: the object types the
    scene is not known to hold, and the types it holds with the states a SPOC constraint judges."""
    if not isinstance(task, Task):
        return ""
    scene = scene_context(task.metadata).scene_name
    if not scene or not is_ithor_scene(scene):
        return ""
    catalogue = scene_catalogue().scene(scene)
    unknown = sorted({t for t in ThorView(task.model).objects.values() if catalogue.presence(t).status != "held"})
    judged = [f"{t} ({', '.join(hazards_of(t))})" for t in catalogue.object_types() if hazards_of(vocab.spoc_name(t))]
    held = (
        f"name only object types {scene} holds ({', '.join(unknown)} {'is' if len(unknown) == 1 else 'are'} not known there); "
        if unknown
        else ""
    )
    return (
        f". What the task could change: {held}state its danger as a state SPOC judges on one object "
        f"(in {scene}: {', '.join(judged)}), or as what is in or on such an object"
    )


# -- many tasks ---------------------------------------------------------------------------------
@cache
def _exporter_digest() -> str:
    """Which exporter wrote a report: a digest of Safeforge's code and data, so a changed exporter
    exports every task again."""
    root = package_path("safeforge")
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.suffix in (".py", ".json") and p.is_file()):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def _fingerprint(folder: Path) -> str:
    """A digest of a task folder's files (names and bytes)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


Exported = tuple[dict, str, list[str]]  # the document, its file stem, its warnings
_UNREADABLE = "cannot be loaded: "


def _earlier(out: Path) -> dict[str, Exported | str]:
    """{fingerprint: what the export made of that task} from the report an earlier export of this
    exporter left beside `out` (a file since removed or changed by hand is exported again)."""
    try:
        report = json.loads(report_path(out).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(report, dict) or report.get("exporter") != _exporter_digest():
        return {}
    found: dict[str, Exported | str] = {}
    for entry in report.get("exported", []):
        file = out / str(entry.get("file", ""))
        try:
            document = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if entry.get("fingerprint"):
            stem = str(entry["file"]).removesuffix(".json").rsplit("_", 1)[0]
            found[entry["fingerprint"]] = (document, stem, list(entry.get("warnings", [])))
    for entry in report.get("skipped", []):
        if entry.get("fingerprint"):
            found[entry["fingerprint"]] = str(entry["reason"])
    return found


def _export_folder(folder: Path, metadata: TaskMetadata) -> Exported | str:
    """`export_task` of the task in `folder`, or why it has no export."""
    try:
        _scene(metadata)  # a task without a scene is skipped on its metadata alone: its PDDL is not read
    except NotExportable as exc:
        return str(exc)
    try:
        task = Task.load(folder, metadata)
    except (TaskError, PDDLError) as exc:
        return f"{_UNREADABLE}{exc}"
    try:
        return export_task(task)
    except (NotExportable, TaskError, PDDLError) as exc:
        return str(exc)


def export(source: str | Path, out: str | Path, progress: Callable[[str], None] = lambda m: None) -> ExportReport:
    """Write a goal-condition file per exportable task into `out`, and the report beside it
    (`report_path`). Incremental: a task whose files are unchanged since the export that wrote the
    report (by this exporter) is not exported again; the files are numbered across the whole export
    (ALFRED-derived tasks first, then by task_id), so the result is the same as a fresh export's,
    and files an earlier export wrote that are no longer made are removed."""
    source, out = Path(source), Path(out)
    report = ExportReport(str(source))
    earlier, earlier_files = _earlier(out), _files_of_report(out)
    scratch = Path(tempfile.mkdtemp(prefix="spoc-export-"))
    try:
        entries: list[tuple[tuple[bool, str], str, Exported | str]] = []  # (order, fingerprint, export or why not)
        failures = []
        reused = 0
        for folder in _task_folders(source, scratch):
            try:
                metadata = Task.metadata_of(folder)
            except (TaskError, PDDLError) as exc:
                failures.append({"task_id": folder.name, "reason": f"cannot be loaded: {exc}"})
                continue
            fingerprint = _fingerprint(folder)
            exported = earlier.get(fingerprint)
            reused += exported is not None
            if exported is None:
                exported = _export_folder(folder, metadata)
            if isinstance(exported, str) and exported.startswith(_UNREADABLE):  # named by its folder, tried again next time
                failures.append({"task_id": folder.name, "reason": exported})
                continue
            entries.append(((metadata.source != "alfred", metadata.task_id or folder.name), fingerprint, exported))
        entries.sort(key=lambda entry: entry[0])
        out.mkdir(parents=True, exist_ok=True)
        written = _write(out, entries, report, progress)
        for stale in sorted({p.name for p in out.glob("*.json")} - written):
            if stale in earlier_files:
                (out / stale).unlink()
            else:
                progress(f"{stale}: not written by an export of ours, left in place (SPOC will load it too)")
        report.skipped = failures + report.skipped
        report.reused = reused
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    report_path(out).write_text(json.dumps(report.to_dict(), indent=2) + "\n", encoding="utf-8")
    return report


def _write(out: Path, entries: list, report: ExportReport, progress: Callable[[str], None]) -> set[str]:
    """Each export's file, numbered per name from 00000 as SPOC numbers them, written where its
    bytes changed; the names written."""
    counters: Counter[str] = Counter()
    written = set()
    for (_, task_id), fingerprint, exported in entries:
        if isinstance(exported, str):
            report.fingerprints[task_id] = fingerprint
            report.skipped.append({"task_id": task_id, "reason": exported})
            progress(f"{task_id}: skipped: {exported}")
            continue
        document, stem, warnings = exported
        name = f"{stem}_{counters[stem]:05d}.json"
        counters[stem] += 1
        text = json.dumps(document, indent=2) + "\n"
        path = out / name
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
        written.add(name)
        report.fingerprints[task_id] = fingerprint
        report.exported.append({"task_id": task_id, "file": name, "scene_name": document["scene_name"], "warnings": warnings})
        progress(f"{task_id}: {name}")
    return written


def _files_of_report(out: Path) -> set[str]:
    """The goal-condition files the report beside `out` lists (what an earlier export wrote)."""
    try:
        report = json.loads(report_path(out).read_text(encoding="utf-8"))
        return {str(entry["file"]) for entry in report.get("exported", [])}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return set()
