"""Where Safeforge keeps its state, and the environment its Prefect application runs with.

One place for the settings that the services command, the flows and the tests share:

| variable | meaning (default) |
|---|---|
| `SAFEFORGE_OUTPUTS` | where runs are written, one folder per run (`<repo>/outputs`) |
| `SAFEFORGE_STATE_DIR` | pid files and logs of the local services (`<repo>/.safeforge`) |
| `SAFEFORGE_PREFECT_PORT` | port of the local Prefect server (4200) |
| `SAFEFORGE_REPLAY_PORT` | port of the replay LLM server of the offline demo (4280) |
| `SAFEFORGE_REPLAY_RESPONSES` | the replayed (hand-written) responses it serves (`<repo>/examples/replay`) |
| `SAFEFORGE_CHECK_EXECUTOR` | where the CPU-bound check stage runs: `local` (default) or `dask` |
| `SAFEFORGE_DASK_ADDRESS` | scheduler of an existing Dask cluster, e.g. `tcp://scheduler:8786`; unset with `dask`: a temporary local cluster |
| `SAFEFORGE_DASK_WORKERS` | workers of that temporary local cluster (2) |

Prefect itself is pointed at the project: `PREFECT_HOME=<repo>/.prefect` (its SQLite database
lives there), `PREFECT_API_URL=http://127.0.0.1:<port>/api`, quick runner polling; values already
in the environment win. Analytics are always off.
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
LOOPBACK = "127.0.0.1"
DEFAULT_PREFECT_PORT = 4200
DEFAULT_REPLAY_PORT = 4280
DEFAULT_REPLAY_RESPONSES = REPO_ROOT / "examples" / "replay"
CHECK_EXECUTORS = ("local", "dask")

_ANALYTICS_OFF = {"PREFECT_SERVER_ANALYTICS_ENABLED": "false", "DO_NOT_TRACK": "1"}


def _env(environ: Mapping[str, str] | None) -> Mapping[str, str]:
    return os.environ if environ is None else environ


def outputs_dir(environ: Mapping[str, str] | None = None) -> Path:
    """The folder holding one sub-folder per run."""
    return Path(_env(environ).get("SAFEFORGE_OUTPUTS") or REPO_ROOT / "outputs")


def state_dir(environ: Mapping[str, str] | None = None) -> Path:
    """Pid files and logs of the services started by `safeforge services start`."""
    return Path(_env(environ).get("SAFEFORGE_STATE_DIR") or REPO_ROOT / ".safeforge")


def prefect_port(environ: Mapping[str, str] | None = None) -> int:
    return int(_env(environ).get("SAFEFORGE_PREFECT_PORT") or DEFAULT_PREFECT_PORT)


def replay_port(environ: Mapping[str, str] | None = None) -> int:
    return int(_env(environ).get("SAFEFORGE_REPLAY_PORT") or DEFAULT_REPLAY_PORT)


def replay_responses(environ: Mapping[str, str] | None = None) -> Path:
    return Path(_env(environ).get("SAFEFORGE_REPLAY_RESPONSES") or DEFAULT_REPLAY_RESPONSES)


def prefect_env(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The Prefect variables Safeforge runs with (to merge into a process's environment)."""
    env = _env(environ)
    defaults = {
        "PREFECT_HOME": str(REPO_ROOT / ".prefect"),
        "PREFECT_API_URL": f"http://{LOOPBACK}:{prefect_port(env)}/api",
        "PREFECT_RUNNER_POLL_FREQUENCY": "1",
    }
    chosen = {key: env.get(key) or value for key, value in defaults.items()}
    return {**chosen, **_ANALYTICS_OFF}


def apply_prefect_env() -> dict[str, str]:
    """Put `prefect_env()` into this process's environment; call before importing prefect."""
    values = prefect_env()
    os.environ.update(values)
    return values


def prefect_ui_url(environ: Mapping[str, str] | None = None) -> str:
    """The Prefect UI belonging to the API URL in use."""
    api = prefect_env(environ)["PREFECT_API_URL"].rstrip("/")
    return api[: -len("/api")] if api.endswith("/api") else api


@dataclass(frozen=True)
class CheckExecutorSettings:
    """Where the check stage runs: in the generating process, or on a Dask cluster."""

    executor: str = "local"
    """`local` or `dask`."""
    dask_address: str | None = None
    """Scheduler address of an existing cluster; None: a temporary LocalCluster."""
    dask_workers: int = 2
    """Workers of the temporary LocalCluster."""

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> CheckExecutorSettings:
        env = _env(environ)
        executor = (env.get("SAFEFORGE_CHECK_EXECUTOR") or "local").strip().lower()
        if executor not in CHECK_EXECUTORS:
            raise ValueError(f"SAFEFORGE_CHECK_EXECUTOR={executor!r}: expected one of {', '.join(CHECK_EXECUTORS)}")
        workers = env.get("SAFEFORGE_DASK_WORKERS") or "2"
        if not workers.isdigit() or int(workers) < 1:
            raise ValueError(f"SAFEFORGE_DASK_WORKERS={workers!r}: expected a positive whole number")
        return cls(executor, env.get("SAFEFORGE_DASK_ADDRESS") or None, int(workers))
