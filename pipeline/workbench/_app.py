"""The workbench's web application (FastAPI): the task list, one task's page, and the JSON calls
its script makes (check, try a plan, save, new task).

Safe by default: the server answers only requests addressed to the loopback names (a page of
another site cannot reach it through DNS rebinding), refuses writes from other origins and writes
that are not JSON (a form of another site cannot post to it), forbids inline script and framing
(Content-Security-Policy), and reaches tasks only by the keys `Workspace` found.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from pydantic import AfterValidator, BaseModel, ConfigDict, Field
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.staticfiles import StaticFiles

from safeforge.common.errors import SafeforgeError
from safeforge.common.limits import CHECK_TIME_LIMIT_S, beyond, current_limits
from safeforge.pddl.errors import PDDLError
from safeforge.runs import RunLocked
from safeforge.task import (
    METADATA,
    SAFETY_DOMAIN,
    SAFETY_PROBLEM,
    AuthoringError,
    CheckReport,
    CheckResult,
    Diagnostic,
    Task,
    TaskError,
    TaskMetadata,
    copy_task,
    read_metadata,
    read_task_file,
    save_edit,
    scaffold_task,
)
from safeforge.validation import trace_plan
from safeforge.workbench._analysis import Analysis, analyse, answer
from safeforge.workbench._checker import Cancelled, Checker, CheckFailed
from safeforge.workbench._listing import FILTERS, Listing, select
from safeforge.workbench._pages import STATIC, environment, section, task_url
from safeforge.workbench._workspace import WorkbenchError, Workspace, text_sha256

LOOPBACK_NAMES = ["127.0.0.1", "localhost"]
EDIT_TOOL = "safeforge workbench"
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self' 'nonce-{nonce}'; img-src 'self' data:; connect-src 'self'; "
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
"""The editor's own styles are the only inline ones: a `<style>` with this response's nonce."""
SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}


def _within(limit: str):
    """A check that a text is within the input limit named `limit` (the settings' `SAFEFORGE_MAX_*`)."""

    def check(text: str) -> str:
        allowed = getattr(current_limits(), limit)
        if len(text.encode("utf-8", "surrogatepass")) > allowed:
            raise ValueError(beyond(limit, f"the text is more than {allowed:,} bytes"))
        return text

    return AfterValidator(check)


class _Texts(BaseModel):
    model_config = ConfigDict(extra="forbid")

    safety_domain: Annotated[str, _within("pddl_bytes")]
    safety_problem: Annotated[str, _within("pddl_bytes")]


class _Plan(_Texts):
    plan: Annotated[str, _within("plan_chars")]


class _Save(_Texts):
    base_sha256: dict[str, str]
    """The sha256 of each safety file as the editor loaded it: a file changed on disk since is not overwritten."""


class _New(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(max_length=100)
    copy_of: str | None = None


@dataclass
class _Folder:
    """A task folder as the page opens it: its texts, its metadata and what could not be read."""

    key: str
    path: Path
    texts: dict[str, str]
    metadata: TaskMetadata
    problems: list[Diagnostic] = field(default_factory=list)

    @classmethod
    def open(cls, key: str, path: Path) -> _Folder:
        texts, problems = {}, []
        for name in (SAFETY_DOMAIN, SAFETY_PROBLEM):
            try:
                texts[name] = read_task_file(path / name)
            except TaskError as exc:
                texts[name] = ""
                problems.append(Diagnostic("read", str(exc), name))
        metadata = TaskMetadata()
        if os.path.lexists(path / METADATA):
            try:
                metadata = read_metadata(path)
            except TaskError as exc:
                problems.append(Diagnostic("read", str(exc), METADATA))
        return cls(key, path, texts, metadata, problems)

    def task(self, body: _Texts | None = None) -> Task:
        """The folder's task, with the edited texts of `body` in place of its own (nothing is written)."""
        if body is None:
            return Task(self.path, self.texts[SAFETY_DOMAIN], self.texts[SAFETY_PROBLEM], self.metadata)
        return Task(self.path, body.safety_domain, body.safety_problem, self.metadata)

    def is_loaded(self, body: _Texts) -> bool:
        """`body` holds the texts as the page loaded them."""
        return (body.safety_domain, body.safety_problem) == (self.texts[SAFETY_DOMAIN], self.texts[SAFETY_PROBLEM])

    def is_saved(self, body: _Texts) -> bool:
        return not self.problems and self.is_loaded(body)

    @property
    def sha256(self) -> dict[str, str]:
        return {name: text_sha256(text) for name, text in self.texts.items()}


def create_app(workspace: Workspace, time_limit: float = CHECK_TIME_LIMIT_S, *, cross_check: bool = False) -> FastAPI:
    """The workbench over `workspace`; checks run with planners limited to `time_limit` seconds (and
    Unified Planning's reading compared too with `cross_check`)."""
    checker = Checker(time_limit, cross_check=cross_check)
    listing = Listing(workspace)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        checker.close()

    app = FastAPI(title="Safeforge workbench", docs_url=None, redoc_url=None, openapi_url=None, lifespan=lifespan)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    def page(request: Request, name: str, status: int = 200, **context) -> HTMLResponse:
        html = (
            environment()
            .get_template(name)
            .render(workspace=workspace, time_limit=checker.time_limit, nonce=request.state.nonce, **context)
        )
        return HTMLResponse(html, status_code=status)

    def opened(key: str) -> _Folder:
        return _Folder.open(key, workspace.folder(key))

    @app.exception_handler(WorkbenchError)
    async def not_found(request: Request, exc: WorkbenchError) -> Response:
        if request.url.path.startswith("/api/"):
            return JSONResponse({"error": str(exc)}, status_code=404)
        return page(request, "not_found.html", 404, message=str(exc))

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> Response:
        return JSONResponse({"error": _invalid(exc)}, status_code=422)  # what is wrong, never the input echoed back

    @app.exception_handler(SafeforgeError)
    async def refused(request: Request, exc: SafeforgeError) -> Response:
        return JSONResponse({"error": str(exc)}, status_code=409 if isinstance(exc, RunLocked) else 400)

    @app.get("/", response_class=HTMLResponse)
    async def task_list(request: Request) -> HTMLResponse:
        rows = await checker.off_thread(listing.rows)
        query = request.query_params.get("q", "")
        filters = {name: request.query_params.get(name, "") for name in FILTERS}
        return page(
            request,
            "list.html",
            rows=select(rows, query, **filters),
            total=len(rows),
            choices=listing.choices(rows),
            query=query,
            filters=filters,
            keys=[row.key for row in rows],
        )

    @app.get("/task/{key}", response_class=HTMLResponse)
    async def task_page(request: Request, key: str) -> HTMLResponse:
        folder = opened(key)
        analysis = await checker.off_thread(lambda: _analyse_saved(folder))
        return page(
            request,
            "task.html",
            key=key,
            folder=folder,
            analysis=analysis,
            review=workspace.review_links().get(folder.metadata.task_id or key),
            read_only=workspace.read_only_reason or _unreadable(folder),
            new_tasks=workspace.new_tasks_reason,
            url=task_url(key),
        )

    @app.post("/api/task/{key}/check")
    async def check(key: str, body: _Texts) -> JSONResponse:
        folder = opened(key)
        if folder.problems and folder.is_loaded(body):  # the editors hold nothing of the files that cannot be read
            return JSONResponse(answer(Analysis(None, list(folder.problems))))
        try:
            _, found = await checker.check(folder.task(body), saved=folder.is_saved(body))
        except Cancelled as exc:
            return JSONResponse({exc.why: True})
        except CheckFailed as exc:
            return JSONResponse({"error": str(exc)}, status_code=500)
        return JSONResponse(found)

    @app.get("/api/task/{key}/progress")
    async def progress(key: str) -> JSONResponse:
        return JSONResponse({"check": checker.progress(opened(key).path)})

    @app.post("/api/task/{key}/stop")
    async def stop(key: str) -> JSONResponse:
        return JSONResponse({"stopped": checker.stop(opened(key).path)})

    @app.post("/api/task/{key}/plan")
    async def try_plan(key: str, body: _Plan) -> JSONResponse:
        task = opened(key).task(body)

        def score() -> dict:
            try:
                trace = trace_plan(task.validator, body.plan)
            except (PDDLError, TaskError) as exc:
                return {"error": f"the task cannot be read, so no plan can be scored: {exc}"}
            return {
                "score": trace.verdict.score,
                "safety_intention": trace.verdict.safety_intention,
                "html": str(section("tried_plan", trace=trace)),
            }

        return JSONResponse(await checker.off_thread(score))

    @app.post("/api/task/{key}/save")
    async def save(key: str, body: _Save) -> JSONResponse:
        if workspace.read_only_reason:
            return JSONResponse({"error": workspace.read_only_reason}, status_code=403)
        folder = opened(key)
        if unreadable := _unreadable(folder):
            return JSONResponse({"error": unreadable}, status_code=409)
        if body.base_sha256 != folder.sha256:
            return JSONResponse({"error": _changed_on_disk(folder)}, status_code=409)
        task = folder.task(body)
        try:
            report, _ = await checker.check(task, saved=folder.is_saved(body))
        except Cancelled as exc:
            return JSONResponse({"error": f"not saved: the check was {exc.why}"}, status_code=409)
        report = report or _unreadable_report(task)

        def write() -> JSONResponse:
            if workspace.edits_need_a_passing_check and not report.ok:
                failed = "; ".join(f"{r.name}: {r.detail}" for r in report.failed)
                return JSONResponse({"error": f"not saved: a run's tasks must pass the check ({failed})"}, status_code=409)
            with workspace.writing("workbench edit"):
                now = _Folder.open(key, folder.path)
                if now.sha256 != folder.sha256 or now.problems:
                    return JSONResponse({"error": _changed_on_disk(folder)}, status_code=409)
                save_edit(task, report, EDIT_TOOL)
            saved = _Folder.open(key, folder.path)
            analysis = analyse(saved.task(), saved=True, report=report, with_spoc=True)
            message = "saved; the check fails: " + ", ".join(r.name for r in report.failed)
            if report.ok:
                message = "saved; the check passes" + (f" with {analysis.warnings} warning(s)" if analysis.warnings else "")
            return JSONResponse({**answer(analysis), "message": message, "base_sha256": saved.sha256})

        return await checker.off_thread(write)

    @app.post("/api/new")
    async def new_task(body: _New) -> JSONResponse:
        if workspace.new_tasks_reason:
            return JSONResponse({"error": workspace.new_tasks_reason}, status_code=403)

        def create() -> Path:
            source = None
            if body.copy_of is not None:
                try:
                    source = Task.load(workspace.folder(body.copy_of))
                except (PDDLError, TaskError) as exc:
                    raise AuthoringError(f"{body.copy_of} cannot be copied: {exc}") from None
            with workspace.writing("workbench new task"):
                return (
                    scaffold_task(workspace.tasks_dir, body.name) if source is None else copy_task(source, workspace.tasks_dir, body.name)
                )

        created = await checker.off_thread(create)
        return JSONResponse({"url": task_url(created.name)}, status_code=201)

    @app.middleware("http")
    async def guard(request: Request, call_next) -> Response:
        if request.method not in ("GET", "HEAD"):
            origin = request.headers.get("origin")
            if origin is not None and origin != f"http://{request.headers.get('host', '')}":
                return JSONResponse({"error": "requests from other sites are refused"}, status_code=403)
            if request.headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
                return JSONResponse({"error": "the workbench takes JSON requests only"}, status_code=415)
        request.state.nonce = secrets.token_urlsafe(16)
        response = await call_next(request)
        response.headers.update(SECURITY_HEADERS)
        response.headers["Content-Security-Policy"] = CONTENT_SECURITY_POLICY.format(nonce=request.state.nonce)
        return response

    app.add_middleware(TrustedHostMiddleware, allowed_hosts=LOOPBACK_NAMES)
    return app


def _analyse_saved(folder: _Folder) -> Analysis:
    if folder.problems:
        return Analysis(None, list(folder.problems))
    return analyse(folder.task(), saved=True)


def _invalid(exc: RequestValidationError) -> str:
    """A request's problems as the messages the workbench wrote them, each with the field it is about."""
    problems = []
    for error in exc.errors():
        where = ".".join(str(part) for part in error.get("loc", ()) if part != "body")
        message = str(error.get("msg", "")).removeprefix("Value error, ")
        problems.append(f"{where}: {message}" if where else message)
    return "; ".join(problems) or "the request is not what the workbench takes"


def _unreadable(folder: _Folder) -> str | None:
    if not folder.problems:
        return None
    return "the folder cannot be edited here until its files can be read: " + "; ".join(p.message for p in folder.problems)


def _unreadable_report(task: Task) -> CheckReport:
    """The report of a text that cannot be read at all (saved as a failing check)."""
    report = CheckReport(task.task_id)
    problem = analyse(task, saved=False).diagnostics[0]
    report.results.append(CheckResult("read", False, problem.message))
    return report


def _changed_on_disk(folder: _Folder) -> str:
    return (
        f"not saved: {folder.path} changed on disk since this page loaded it (another editor or process); "
        "copy your text, reload the page and apply it again"
    )
