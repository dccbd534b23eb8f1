"""What an ALFRED-derived task knows about its AI2-THOR scene: the floor plan, the PDDL
parameters (target types) and the first annotation, found in the task's provenance.

Looked up in order: the source record's metadata carried in provenance (`record_metadata`,
`source_metadata` or `metadata`), read by the `ai2thor_scene` hook of the task's source (see
`safeforge.sources.SourceSpec`), the trajectory file a portable `provenance.origin` names when
that dataset is on this machine (`safeforge.sources.registry.resolve_origin`; its object poses
then set the scene up), then the record text
(`Scene: FloorPlanN`, instruction from `1. <task_desc>`).
An explicit `metadata["spoc"]["scene_name"]` wins over all of them.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from safeforge.sources.alfred import TRAJECTORY_FILE, trajectory_record
from safeforge.sources.registry import SOURCES, resolve_origin
from safeforge.task.metadata import TaskMetadata


@dataclass
class SceneContext:
    scene_name: str | None = None
    params: dict = field(default_factory=dict)
    instruction: str | None = None
    found_in: str = ""
    trajectory: dict | None = None  # the whole trajectory file, when the task's origin names one on this machine


def _from_record_metadata(record: dict, where: str, source: str) -> SceneContext | None:
    spec = SOURCES.get(source)
    scene = spec.ai2thor_scene(record) if spec is not None and spec.ai2thor_scene is not None else None
    if not scene:
        return None
    annotations = record.get("annotations") or []
    first = annotations[0].get("task_desc") if annotations and isinstance(annotations[0], dict) else None
    return SceneContext(scene, dict(record.get("pddl_params") or {}), first or None, where)


def _from_origin(origin: str, source: str) -> SceneContext | None:
    if PurePosixPath(origin.split(":row ")[0]).name != TRAJECTORY_FILE:
        return None  # only a trajectory file holds a scene: nothing to resolve
    path = resolve_origin(origin)
    if path is None or path.name != TRAJECTORY_FILE:
        return None
    try:
        record = trajectory_record(path)
    except ValueError:
        return None
    found = _from_record_metadata(record.metadata, f"the trajectory {origin}", source)
    if found is not None:
        found.trajectory = json.loads(path.read_text(encoding="utf-8"))
    return found


def scene_context(metadata: TaskMetadata) -> SceneContext:
    """The scene of a task, or a context without scene_name when none is known."""
    explicit = metadata.spoc or {}
    provenance = metadata.provenance.model_dump()
    found = None
    source = str(provenance.get("source") or "alfred")
    for key in ("record_metadata", "source_metadata", "metadata"):
        if isinstance(provenance.get(key), dict):
            found = found or _from_record_metadata(provenance[key], f"provenance.{key}", source)
    traced = _from_origin(str(provenance.get("origin") or ""), source)
    if found is not None and traced is not None and traced.scene_name == found.scene_name:
        found.trajectory = traced.trajectory
    found = found or traced
    if found is None:
        text = str(provenance.get("record_text") or "")
        match = re.search(r"Scene: (FloorPlan\d+)", text)
        first = re.search(r"^1\. (.+)$", text, re.MULTILINE)  # the first annotation's task_desc
        found = (
            SceneContext(match.group(1), instruction=first.group(1).strip() if first else None, found_in="provenance.record_text")
            if match
            else SceneContext()
        )
    if explicit.get("scene_name"):
        found.scene_name, found.found_in = str(explicit["scene_name"]), "metadata.spoc.scene_name"
    return found
