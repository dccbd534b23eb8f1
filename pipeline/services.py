"""The local services of the Prefect application: start, status and stop, all on loopback.

`start_services()` starts, in this order, and waits until each answers:
1. `prefect-server`: `prefect server start` on 127.0.0.1 (SQLite database in PREFECT_HOME);
2. `llm-replay`: the replay LLM server with the bundled replayed responses (the offline demo), unless
   OPENAI_BASE_URL is set, in which case the deployments call that endpoint instead;
3. `deployments`: `python -m safeforge.flows.deployments`, the process that serves every deployment;
4. `label-studio`: Label Studio, from its own virtual environment (through `review`), with its
   local PostgreSQL server first when its data dir uses one (SAFEFORGE_LABELSTUDIO_DATABASE).
Each process runs in its own session, with a state file and a log in `<state dir>/services/`.
Starting again reuses what is running. `stop_services()` ends them in reverse order, each with
its whole process tree, and checks that no process of theirs is left.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from urllib.parse import urlparse

import httpx

from safeforge.common.errors import SafeforgeError
from safeforge.common.processes import ProcessRecord, spawn, stop, wait_ready
from safeforge.runs.ledger import SPOC_DIR
from safeforge.settings import LOOPBACK, Settings

PROCESS_SERVICES = ("prefect-server", "llm-replay", "deployments")
READY_TIMEOUT_S = {"prefect-server": 180.0, "llm-replay": 30.0, "deployments": 180.0}

Progress = Callable[[str], None]


class ServiceError(SafeforgeError):
    """A service did not start or stop; the message names it and quotes its log."""


@dataclass(frozen=True)
class ServiceStatus:
    name: str
    running: bool
    url: str = ""
    pid: int | None = None
    log: str = ""
    note: str = ""


def services_dir(environ: Mapping[str, str] | None = None) -> Path:
    return Settings.load(environ).state_dir / "services"


def local_prefect_api(environ: Mapping[str, str] | None = None) -> str:
    return f"http://{LOOPBACK}:{Settings.load(environ).prefect_port}/api"


def service_env(environ: Mapping[str, str] | None = None, *, llm_base_url: str | None = None) -> dict[str, str]:
    """The environment of the services and of a shell driving them: the Prefect settings (API on
    the local server) and, for the offline demo, OPENAI_BASE_URL of the replay server."""
    env = dict(os.environ if environ is None else environ)
    env.update(Settings.load(env).prefect_env())
    env["PREFECT_API_URL"] = local_prefect_api(env)
    if llm_base_url:
        env["OPENAI_BASE_URL"] = llm_base_url
    return env


def shell_exports(environ: Mapping[str, str] | None = None) -> str:
    """`export` lines that point a shell at the running services (for `eval`)."""
    env = service_env(environ, llm_base_url=_replay_url_if_running(environ))
    keys = [*Settings.load(env).prefect_env(), "OPENAI_BASE_URL"]
    return "\n".join(f"export {key}={shlex.quote(env[key])}" for key in keys if env.get(key))


# -- state files -----------------------------------------------------------------------------


def _record_path(name: str, environ=None) -> Path:
    return services_dir(environ) / f"{name}.json"


def _running(name: str, environ=None) -> ProcessRecord | None:
    record = ProcessRecord.load(_record_path(name, environ))
    return record if record is not None and record.is_running() else None


def _replay_url_if_running(environ=None) -> str | None:
    record = _running("llm-replay", environ)
    return record.url if record else None


# -- starting --------------------------------------------------------------------------------


def _get_ok(url: str, expect: Callable[[httpx.Response], bool] = lambda r: r.status_code == 200) -> bool:
    try:
        return expect(httpx.get(url, timeout=2.0))
    except httpx.HTTPError:
        return False


def prefect_healthy(api_url: str) -> bool:
    return _get_ok(f"{api_url}/health", lambda r: r.status_code == 200 and r.text.strip() == "true")


def deployments_polled(api_url: str, names: list[str], since: float) -> bool:
    """Whether a runner has polled every `flow/deployment` since `since` (a Unix time): the
    deployments are registered and served, not left over from an earlier session."""
    for name in names:
        try:
            response = httpx.get(f"{api_url}/deployments/name/{name}", timeout=2.0)
        except httpx.HTTPError:
            return False
        polled = response.json().get("last_polled") if response.status_code == 200 else None
        if not polled or datetime.fromisoformat(polled.replace("Z", "+00:00")).timestamp() < since:
            return False
    return True


def _start_process(
    name: str, command: list[str], env: Mapping[str, str], url: str, ready: Callable[[], bool], progress: Progress, environ=None
) -> ProcessRecord:
    running = _running(name, environ)
    if running is not None:
        progress(f"{name}: already running (pid {running.pid}) at {running.url}")
        return running
    _forget(name, environ)
    progress(f"{name}: starting ({' '.join(Path(c).name if i == 0 else c for i, c in enumerate(command))})")
    started = time.monotonic()
    record = spawn(name, command, env=env, log=services_dir(environ) / f"{name}.log", url=url)
    record.save(_record_path(name, environ))
    try:
        wait_ready(record, ready, READY_TIMEOUT_S[name], ServiceError)
    except ServiceError:
        _forget(name, environ)
        raise
    progress(f"{name}: ready at {url} (pid {record.pid}, {time.monotonic() - started:.0f}s)")
    return record


def start_services(
    *, label_studio: bool = True, replay: bool | None = None, environ: Mapping[str, str] | None = None, progress: Progress = print
) -> list[ServiceStatus]:
    """Start what the main job needs; `replay=None` starts the replay LLM server unless
    OPENAI_BASE_URL is set. Returns the status of every service."""
    from safeforge.flows.deployments import (
        deployment_names,  # flows imports prefect: only when needed
    )

    env_in = dict(os.environ if environ is None else environ)
    api = local_prefect_api(env_in)
    base_env = service_env(env_in)
    config = Settings.load(env_in)
    port = config.prefect_port
    if not _running("prefect-server", environ) and prefect_healthy(api):
        raise ServiceError(f"something else already answers at {api}; stop it or set SAFEFORGE_PREFECT_PORT")
    _start_process(
        "prefect-server",
        [sys.executable, "-m", "prefect", "server", "start", "--host", LOOPBACK, "--port", str(port)],
        base_env,
        api.removesuffix("/api"),
        lambda: prefect_healthy(api),
        progress,
        environ,
    )

    if replay is None:
        replay = not config.openai_base_url
    llm_url = None
    if replay:
        llm_url = f"http://{LOOPBACK}:{config.replay_port}/v1"
        responses = config.replay_responses_dir
        _start_process(
            "llm-replay",
            [sys.executable, "-m", "safeforge.llm.replay_server", "--responses", str(responses), "--port", str(config.replay_port)],
            base_env,
            llm_url,
            lambda: _get_ok(f"{llm_url}/models"),
            progress,
            environ,
        )
    else:
        progress(f"llm-replay: not started; the deployments call OPENAI_BASE_URL={config.openai_base_url}")

    names, since = deployment_names(), time.time() - 1.0
    _start_process(
        "deployments",
        [sys.executable, "-m", "safeforge.flows.deployments"],
        service_env(env_in, llm_base_url=llm_url),
        api.removesuffix("/api") + "/deployments",
        lambda: deployments_polled(api, names, since),
        progress,
        environ,
    )

    if label_studio:
        _start_label_studio(env_in, progress)
    return service_status(environ)


def where(run: str, environ: Mapping[str, str] | None = None) -> str:
    """Where a run's results are: its tasks, the Prefect UI, its review project (the link the
    review-push flow left as an artifact), and how to stop the services."""
    from safeforge.flows.generate import artifact_key  # flows imports prefect: only when needed

    settings = Settings.load(environ)
    key = f"review-{artifact_key(run)}"
    try:
        response = httpx.post(f"{settings.prefect_api}/artifacts/filter", json={"artifacts": {"key": {"any_": [key]}}}, timeout=10)
        found = response.json() if response.status_code == 200 else []
    except httpx.HTTPError:
        found = []
    link = re.search(r"\((http[^)]+)\)", found[0].get("data") or "") if found else None
    review = link.group(1) if link else f"(none yet: prefect deployment run review-push/checked --param run_name={run})"
    spoc = (settings.outputs / run / SPOC_DIR).absolute()
    files = sum(1 for _ in spoc.glob("*.json"))
    return "\n".join(
        [
            f"tasks:          {(settings.outputs / run / 'tasks').absolute()}",
            f"SPOC files:     {spoc}  ({files} goal-condition file(s): the checked tasks that export; safeforge spoc check {spoc})",
            f"run summary:    safeforge runs show {run}",
            f"Prefect UI:     {settings.prefect_ui_url}  (flow runs, per-record task runs, the run's artifact)",
            f"review project: {review}  (log in as {_review_config(environ).username}; password: README, section Review)",
            f"workbench:      safeforge workbench {(settings.outputs / run).absolute()}  (state traces; review tasks link to it)",
            "stop:           safeforge services stop",
        ]
    )


# -- Label Studio (through review/, which runs it from .venv-labelstudio) ---------------------


def _review_config(environ: Mapping[str, str] | None = None):
    from safeforge.review import ReviewConfig

    config = ReviewConfig.from_env(environ)
    return replace(config, data_dir=config.data_dir.absolute())


def _start_label_studio(environ: Mapping[str, str], progress: Progress) -> None:
    from safeforge.review import ServerError, running_server, start_server

    config = _review_config(environ)
    host = urlparse(config.url).hostname
    if host not in ("127.0.0.1", "localhost"):
        progress(f"label-studio: not started; LABEL_STUDIO_URL={config.url} is not on this machine")
        return
    running = running_server(config.data_dir)
    if running is not None:
        progress(f"label-studio: already running (pid {running.pid}) at {running.url}")
        return
    progress(f"label-studio: starting (from .venv-labelstudio, data in {config.data_dir})")
    started = time.monotonic()
    try:
        handle = start_server(config.data_dir, config.port, config.username, config.password, config.api_key, database=config.database)
    except ServerError as exc:
        raise ServiceError(f"label-studio: {exc}") from exc
    progress(
        f"label-studio: ready at {handle.url} (pid {handle.pid}, {handle.database}, {time.monotonic() - started:.0f}s); "
        f"log in as {config.username}"
    )


# -- status and stopping ---------------------------------------------------------------------


def service_status(environ: Mapping[str, str] | None = None) -> list[ServiceStatus]:
    statuses = []
    for name in PROCESS_SERVICES:
        record = ProcessRecord.load(_record_path(name, environ))
        if record is None:
            statuses.append(ServiceStatus(name, False, note="not started"))
        elif not record.is_running():
            statuses.append(ServiceStatus(name, False, record.url, record.pid, record.log, "exited"))
        else:
            statuses.append(ServiceStatus(name, True, record.url, record.pid, record.log))
    statuses.append(_label_studio_status(environ))
    return statuses


def _label_studio_status(environ: Mapping[str, str] | None = None) -> ServiceStatus:
    from safeforge.review import running_server

    config = _review_config(environ)
    handle = running_server(config.data_dir)
    if handle is None:
        return ServiceStatus("label-studio", False, config.url, note="not running")
    return ServiceStatus("label-studio", True, handle.url, handle.pid, handle.log_path, note=handle.database)


def _forget(name: str, environ=None) -> None:
    _record_path(name, environ).unlink(missing_ok=True)


def stop_services(environ: Mapping[str, str] | None = None, progress: Progress = print) -> None:
    """Stop every service (reverse start order) and check that none of their processes is left."""
    from safeforge.review import running_server, stop_database, stop_server

    problems = []
    data_dir = _review_config(environ).data_dir
    handle = running_server(data_dir)
    if handle is not None:
        stop_server(handle)
        if handle.is_running():
            problems.append(f"label-studio: pid {handle.pid} survived")
        else:
            progress(
                f"label-studio: stopped (pid {handle.pid} and its process group{', then its PostgreSQL server' if handle.postgres else ''})"
            )
    elif stop_database(data_dir):
        progress("label-studio: its PostgreSQL server was left running; stopped it")
    for name in reversed(PROCESS_SERVICES):
        record = ProcessRecord.load(_record_path(name, environ))
        if record is None:
            continue
        if not record.is_running():
            _forget(name, environ)
            progress(f"{name}: was not running")
            continue
        left = stop(record)
        if left:
            problems.append(f"{name}: processes {left} survived SIGKILL")
        else:
            _forget(name, environ)
            progress(f"{name}: stopped (pid {record.pid} and its children)")
    if problems:
        raise ServiceError("; ".join(problems))
