"""SPOC goal-condition files: export accepted tasks that map to AI2-THOR, and check any folder
of such files (format: ../shared/reference/SPOC.md; see README, "Publishing releases and SPOC
files"). The AI2-THOR type list and state vocabulary are data: ai2thor_types.json."""

from pipeline.spoc._check import Problem, check_file, check_folder
from pipeline.spoc._export import REPORT, ExportReport, NotExportable, export, export_task

__all__ = ["REPORT", "ExportReport", "NotExportable", "Problem", "check_file", "check_folder", "export",
           "export_task"]
