"""SPOC goal-condition files: export accepted tasks that map to AI2-THOR, and check any folder
of such files (SPOC's goal-condition format; see the docs, "Publishing"). The AI2-THOR type list
and state vocabulary are data: ai2thor_types.json."""

from typing import TYPE_CHECKING

from safeforge.common.lazy import lazy_exports

if TYPE_CHECKING:  # the public names; at run time each loads on first use (lazy_exports reads this block)
    from ._check import Problem, check_file, check_folder
    from ._export import REPORT, ExportReport, NotExportable, export, export_task, report_path

__getattr__, __dir__ = lazy_exports(__name__)
