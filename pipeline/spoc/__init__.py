"""SPOC goal-condition files: export tasks that live in an AI2-THOR scene, check any folder of
such files under SPOC's rules, and the scene catalogue (which object types each iTHOR scene holds).
See the docs, "SPOC". The AI2-THOR types, the state vocabulary and the catalogue are data:
ai2thor_types.json, scenes.json."""

from typing import TYPE_CHECKING

from safeforge.common.lazy import lazy_exports

if TYPE_CHECKING:  # the public names; at run time each loads on first use (lazy_exports reads this block)
    from ._check import Problem, check_document, check_file, check_folder
    from ._constraint import NotExportable
    from ._export import REPORT, ExportReport, export, export_problems, export_task, report_path
    from ._kinds import hazards_of
    from ._scenes import Presence, Scene, SceneCatalogue, scene_catalogue, type_states
    from ._vocabulary import types_named

__all__ = [
    "Problem",
    "check_document",
    "check_file",
    "check_folder",
    "NotExportable",
    "REPORT",
    "ExportReport",
    "export",
    "export_problems",
    "export_task",
    "report_path",
    "hazards_of",
    "Presence",
    "Scene",
    "SceneCatalogue",
    "scene_catalogue",
    "type_states",
    "types_named",
]
__getattr__, __dir__ = lazy_exports(__name__)
