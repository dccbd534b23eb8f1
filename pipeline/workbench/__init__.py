"""The authoring workbench as a local page: `safeforge workbench [FOLDER]`.

- workspace: the served folder (a folder of task folders, one task folder, a run or a release),
  its tasks by key, what may be written there (`Workspace`, `WorkbenchError`).
- listing: the task list with check status, source, danger group and review state.
- analysis: what a task's page shows for one version of its text (diagnostics at their lines, the
  basic problem beside the danger rules, reference plans as state traces, the SPOC file).
- checker: checks on worker threads, newest text first.
- app: the FastAPI application (`create_app`); pages: its Jinja2 templates.
- server: `serve`, on 127.0.0.1 only.
"""

from typing import TYPE_CHECKING

from safeforge.common.lazy import lazy_exports

if TYPE_CHECKING:  # the public names; at run time each loads on first use (lazy_exports reads this block)
    from ._app import create_app
    from ._server import serve
    from ._workspace import WorkbenchError, Workspace

__all__ = ["create_app", "serve", "WorkbenchError", "Workspace"]
__getattr__, __dir__ = lazy_exports(__name__)
