"""ALFRED trajectories (json_2.1.0) -> Records, one per trajectory.

Layout: ``json_2.1.0/<split>/<task>/<trial>/traj_data.json`` (test splits have no <task> level);
the preprocessed copies under ``pp/`` are never read. The text has the task type, the PDDL
parameters, the scene, every annotation's task_desc and high_descs, and the high-level plan.
Record id: ``alfred_<task_id>`` (task_id is the trial id, unique per trajectory).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from safeforge.sources.errors import BAD_FILE_ERRORS, SourceError, reason
from safeforge.sources.record import Record
from safeforge.sources.report import ReadReport, SkippedRow
from safeforge.sources.spec import Download, Licence, SourceSpec, fixed_downloads
from safeforge.sources.textio import dataset_entries, links_not_followed, read_json, require_dir, skip_links

SOURCE = "alfred"
TRAJECTORY_FILE = "traj_data.json"
PREPROCESSED_DIR = "pp"
SPLITS = ("train", "valid_seen", "valid_unseen", "tests_seen", "tests_unseen")
_PARAMS = (
    ("object_target", "Object"),
    ("mrecep_target", "Movable receptacle"),
    ("parent_target", "Receptacle"),
    ("toggle_target", "Toggle object"),
)


def read_alfred(path: str | Path, *, report: ReadReport | None = None) -> Iterator[Record]:
    """Records of every traj_data.json under `path` (json_2.1.0/, a split, or one file)."""
    path = Path(path)
    files, links = ([path], []) if path.is_file() else _trajectory_files(path)
    return _records(files, links, report if report is not None else ReadReport())


def _trajectory_files(root: Path) -> tuple[list[Path], list[Path]]:
    """The trajectory files under `root` (not in preprocessed folders), and the links not followed."""
    require_dir(root)
    found, links = dataset_entries(root)
    files = [f for f in found if f.name == TRAJECTORY_FILE and PREPROCESSED_DIR not in f.relative_to(root).parts[:-1]]
    if not files:
        raise SourceError(root, f"no {TRAJECTORY_FILE} files found{links_not_followed(links)}")
    return files, links


def _records(files: list[Path], links: list[Path], report: ReadReport) -> Iterator[Record]:
    skip_links(links, report)
    first_seen: dict[str, Path] = {}
    for file in files:
        report.read += 1
        try:
            record = trajectory_record(file)
        except BAD_FILE_ERRORS as exc:
            report.skip(SkippedRow(str(file), None, getattr(exc, "field", None), reason(exc)))
            continue
        if record.record_id in first_seen:
            report.skip(
                SkippedRow(str(file), None, "task_id", "duplicate task_id", f"{record.record_id} (first in {first_seen[record.record_id]})")
            )
            continue
        first_seen[record.record_id] = file
        yield record


def _missing(field: str) -> ValueError:
    return _field_error(field, f"missing or empty field {field}")


def _field_error(field: str, message: str) -> ValueError:
    exc = ValueError(message)
    exc.field = field  # type: ignore[attr-defined]
    return exc


def _text_field(value: Any, field: str) -> str:
    """`value` when it is text; a field of another type (null included) makes the file unusable."""
    if not isinstance(value, str):
        raise _field_error(field, f"field {field} is not text")
    return value


def _text_list(value: Any, field: str) -> list[str]:
    if not isinstance(value, list):
        raise _field_error(field, f"field {field} is not a list of texts")
    return [_text_field(item, field) for item in value]


def _object_field(value: Any, field: str) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _field_error(field, f"field {field} is not an object")
    return value


def trajectory_record(file: Path) -> Record:
    """The Record of one traj_data.json; ValueError if it is not a usable trajectory."""
    data = read_json(file)
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    for field in ("task_id", "task_type"):
        if not isinstance(data.get(field), str) or not data[field].strip():
            raise _missing(field)
    annotations = _annotations(data)
    params = _object_field(data.get("pddl_params"), "pddl_params")
    for key, _ in _PARAMS:  # what the text shows must be text
        _text_field(params.get(key, ""), f"pddl_params.{key}")
    scene = _object_field(data.get("scene"), "scene")
    _text_field(scene.get("floor_plan", ""), "scene.floor_plan")
    plan = _plan(data)
    split = next((part for part in reversed(file.parts) if part in SPLITS), "")
    task_dir = file.parent.parent.name
    metadata: dict[str, Any] = {
        "task_id": data["task_id"],
        "task_type": data["task_type"],
        "split": split,
        "task": "" if task_dir == split else task_dir,
        "pddl_params": params,
        "scene": {k: scene.get(k) for k in ("floor_plan", "scene_num", "dirty_and_empty") if k in scene},
        "annotations": annotations,
        "plan": plan,
    }
    return Record(f"{SOURCE}_{data['task_id']}", SOURCE, _text(data, params, scene, annotations, plan), metadata, str(file))


def _annotations(data: dict) -> list[dict[str, Any]]:
    anns = _object_field(data.get("turk_annotations"), "turk_annotations").get("anns")
    if not isinstance(anns, list) or not anns:
        raise _missing("turk_annotations.anns")
    return [
        {
            "task_desc": _text_field(a.get("task_desc", ""), "turk_annotations.anns.task_desc").strip(),
            "high_descs": [h.strip() for h in _text_list(a.get("high_descs", []), "turk_annotations.anns.high_descs")],
        }
        for a in anns
        if isinstance(a, dict)
    ]


def _plan(data: dict) -> list[str]:
    steps = []
    high_pddl = _object_field(data.get("plan"), "plan").get("high_pddl")
    for step in high_pddl if isinstance(high_pddl, list) else []:
        action = _object_field(step.get("discrete_action"), "plan.high_pddl.discrete_action") if isinstance(step, dict) else {}
        name = _text_field(action.get("action", ""), "plan.high_pddl.discrete_action.action")
        if name and name != "NoOp":
            arguments = action.get("args") or []
            args = [str(a) if isinstance(a, int | float) else _text_field(a, "plan.high_pddl.discrete_action.args") for a in arguments]
            steps.append(f"{name}({', '.join(args)})")
    return steps


def _text(data: dict, params: dict, scene: dict, annotations: list[dict], plan: list[str]) -> str:
    lines = [f"Task type: {data['task_type'].replace('_', ' ')} ({data['task_type']})"]
    targets = [f"{label}: {params[key]}" for key, label in _PARAMS if params.get(key)]
    if params.get("object_sliced"):
        targets.append("the object is sliced")
    if targets:
        lines.append("; ".join(targets))
    if scene.get("floor_plan"):
        lines.append(f"Scene: {scene['floor_plan']}")
    lines.append("Instructions:")
    for number, ann in enumerate(annotations, start=1):
        lines.append(f"{number}. {ann['task_desc']}")
        lines += [f"   - {step}" for step in ann["high_descs"]]
    if plan:
        lines.append("High-level plan: " + "; ".join(plan))
    return "\n".join(lines)


def scene_of(metadata: dict[str, Any]) -> str | None:
    """The AI2-THOR floor plan a trajectory was recorded in (`FloorPlanN`)."""
    scene = metadata.get("scene")
    return scene.get("floor_plan") or None if isinstance(scene, dict) else None


SPEC = SourceSpec(
    name=SOURCE,
    title="ALFRED trajectories",
    read=read_alfred,
    expects="json_2.1.0/<split>/<task>/<trial>/traj_data.json (pp/ copies are ignored)",
    homepage="https://askforalfred.com",
    licence=Licence("MIT", "MIT (ALFRED, askforalfred/alfred)"),
    citation="""@inproceedings{shridhar2020alfred,
  title = {{ALFRED}: A Benchmark for Interpreting Grounded Instructions for Everyday Tasks},
  author = {Shridhar, Mohit and Thomason, Jesse and Gordon, Daniel and Bisk, Yonatan and Han, Winson and
            Mottaghi, Roozbeh and Zettlemoyer, Luke and Fox, Dieter},
  booktitle = {2020 IEEE/CVF Conference on Computer Vision and Pattern Recognition (CVPR)},
  pages = {10737--10746},
  year = {2020},
  doi = {10.1109/CVPR42600.2020.01075},
  eprint = {1912.01734},
  archivePrefix = {arXiv}
}""",
    sample=("alfred", "json_2.1.0"),
    full_data="json_2.1.0",
    downloads=fixed_downloads(
        Download(
            "json_2.1.0",
            "https://ai2-vision-alfred.s3-us-west-2.amazonaws.com/json_2.1.0.7z",
            "json_2.1.0.7z",
            None,
            unpack="7z",
            note="the ALFRED project publishes no checksum: the first download's is recorded",
        )
    ),
    ai2thor_scene=scene_of,
    extras={"7z": "safeforge[alfred]"},
)
