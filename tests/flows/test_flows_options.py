"""`safeforge generate` and the flow `generate` take the same options, with the same defaults, and
run the records the same way: every executor SAFEFORGE_EXECUTOR names, with one or two processes,
works in both (the same records end in the same states, run.json names the same executor) or is
refused by both with the same message."""

from __future__ import annotations

import asyncio
import inspect
import json
import subprocess
import sys

import pytest
from flows_support import base_env
from prefect.settings import PREFECT_API_URL
from prefect.testing.utilities import prefect_test_harness

from safeforge.cli.main import build_parser
from safeforge.flows.executors import ExecutorError
from safeforge.flows.generate import generate
from safeforge.flows.review import review_pull, review_push
from safeforge.generation import GenerateOptions
from safeforge.sources import SOURCES

# CLI flags that are not options of a run: how the result is shown
PRESENTATION = {"json", "func", "command", "debug"}
# the sources' own options: one `filters` mapping in the flow and the library, one flag each on the CLI
SOURCE_FILTER_FLAGS = {option.dest for spec in SOURCES.values() for option in spec.options}


def test_the_flow_takes_every_option_with_its_default():
    parameters = inspect.signature(generate.fn).parameters
    assert list(parameters) == list(GenerateOptions.model_fields)
    for name, field in GenerateOptions.model_fields.items():
        default = field.get_default(call_default_factory=True)
        flow_default = parameters[name].default
        assert (flow_default or {}) == default if name == "filters" else flow_default == default, name


def test_the_command_line_takes_every_option_with_its_default():
    args = build_parser(["generate"]).parse_args(["generate", "neiss"])
    given = vars(args)
    options = set(GenerateOptions.model_fields) - {"filters"}
    assert options <= set(given), options - set(given)
    assert set(given) - options - PRESENTATION == SOURCE_FILTER_FLAGS
    for name in options - {"source"}:
        assert given[name] == GenerateOptions.model_fields[name].get_default(), name


# NEISS sample rows 2 and 3: a NO_DANGER record, and one checked in round 1
RECORDS = {"source": "neiss", "offset": 1, "limit": 2, "concurrency": 2, "run_name": "parity"}
COMBINATIONS = [("local", 1), ("local", 2), ("prefect", 1), ("dask", 1), ("prefect", 2), ("dask", 2)]


@pytest.fixture(scope="module")
def harness():
    with prefect_test_harness(server_startup_timeout=120):
        yield PREFECT_API_URL.value()


def flow_outcome(params: dict) -> tuple[str, dict | None]:
    """("ok", {state: n}) or ("refused", message) of the flow `generate` run here."""
    try:
        result = asyncio.run(generate(**params))
    except ExecutorError as exc:
        return "refused", str(exc)
    return "ok", result["states"]


def cli_outcome(params: dict, env: dict, cwd) -> tuple[str, dict | str]:
    """The same of `safeforge generate` in a subprocess."""
    args = ["generate", params["source"], "--offset", "1", "--limit", "2", "--concurrency", "2", "--run", "parity"]
    done = subprocess.run(
        [sys.executable, "-m", "safeforge.cli", *args, "--workers", str(params["workers"]), "--json"],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode == 2:
        return "refused", done.stderr.strip().removeprefix("error: ")
    assert done.returncode == 0, done.stderr
    return "ok", json.loads(done.stdout)["states"]


@pytest.mark.slow
@pytest.mark.parametrize(("executor", "workers"), COMBINATIONS)
def test_the_command_line_and_the_flow_run_records_the_same_way(harness, replay_server, tmp_path, monkeypatch, executor, workers):
    base_url, _ = replay_server
    settings = {"OPENAI_BASE_URL": base_url, "SAFEFORGE_EXECUTOR": executor, "SAFEFORGE_DASK_WORKERS": "1"}
    for name, value in {**settings, "SAFEFORGE_OUTPUTS": str(tmp_path / "flow")}.items():
        monkeypatch.setenv(name, value)
    params = {**RECORDS, "workers": workers}
    env = base_env(tmp_path / "prefect", harness, **settings, SAFEFORGE_OUTPUTS=str(tmp_path / "cli"))

    flow, cli = flow_outcome(params), cli_outcome(params, env, tmp_path)
    assert cli == flow
    if flow[0] == "refused":
        assert executor != "local" and f"SAFEFORGE_EXECUTOR={executor}" in flow[1] and f"workers 1, not {workers}" in flow[1]
        return
    assert flow[1] == {"checked": 1, "no_danger": 1}
    made_by = [json.loads((tmp_path / way / "parity" / "run.json").read_text())["invocations"][0]["executor"] for way in ("flow", "cli")]
    assert made_by[0] == made_by[1] and made_by[0]["name"] == executor
    assert made_by[0].get("workers", 1) == workers


@pytest.mark.parametrize("command", ["push", "pull"])
def test_the_review_flows_take_every_option_of_the_command(command):
    """`review-push`/`review-pull` offer what `safeforge review push/pull` offers, with the same
    defaults (the run by name; `--no-adjudicators` is `adjudicators=[]`)."""
    flow = {"push": review_push, "pull": review_pull}[command]
    parameters = inspect.signature(flow.fn).parameters
    given = vars(build_parser(["review"]).parse_args(["review", command, "a-run"]))
    options = set(given) - PRESENTATION - {"review_command", "run", "out", "adjudicator", "no_adjudicators"}
    assert set(parameters) == options | {"run_name"} | ({"adjudicators"} if command == "push" else set())
    for name in options:
        assert parameters[name].default == given[name], name
