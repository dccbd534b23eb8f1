"""SPOC goal-condition files: export accepted tasks that map to AI2-THOR, and check any folder
of such files (SPOC's goal-condition format; see the docs, "Publishing"). The AI2-THOR type list and state vocabulary are data: ai2thor_types.json."""
from pipeline.common.lazy import lazy_exports

__getattr__, __dir__ = lazy_exports(__name__, {
    "Problem": "._check",
    "check_file": "._check",
    "check_folder": "._check",
    "REPORT": "._export",
    "ExportReport": "._export",
    "NotExportable": "._export",
    "export": "._export",
    "export_task": "._export",
})
