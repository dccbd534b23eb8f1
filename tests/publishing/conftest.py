"""What the publishing tests release, made as the pipeline makes it: runs of every source generated
from the bundled samples against the replay server (among them the records whose tasks are
generated for an AI2-THOR scene), pushed to a real Label Studio server, voted on by two annotators
through its API and pulled; and the check that greps every published byte."""

from __future__ import annotations

import gzip
import io
import json
import re
import shutil
import sys
from pathlib import Path

import pytest
from tests_paths import REPO, SAMPLES

from safeforge.generation import GenerateOptions, GenerationSettings, run_generation
from safeforge.llm import LLMConfig
from safeforge.llm.replay_server import running_replay_server
from safeforge.review import ReviewConfig, check_installation, pull_run, push_run, start_server, stop_server
from safeforge.runs.ledger import RunStore
from tests.doubles.annotators import annotator_client, annotator_token
from tests.doubles.hub_server import running_hub_server
from tests.review.review_helpers import ADMIN, PASSWORD, TOKEN, Submission, free_port, ls_task_id, submit

REPLAY = REPO / "pipeline" / "llm" / "replay_responses"
EGG = "json_2.1.0/train/pick_heat_then_place_in_recep-Egg-None-SinkBasin-20/trial_T20190908_205022_607865/traj_data.json"
RUNS = {  # per source, the calls that make its run: the sample records the replay files script
    "neiss": [
        {"limit": 5},
        {"path": str(SAMPLES / "neiss" / "neiss_2014_2023_code_replaced_100_samples.csv"), "filters": {"products": [464, 4056]}},
    ],
    "normbank": [{"limit": 2}],
    "bddl": [{"limit": 2}],
    "virtualhome": [{"limit": 2}],
    "alfred": [{"limit": 2}, {"path": str(SAMPLES / "alfred" / EGG)}],
}
ANNOTATORS = ("ann@annotators.test", "bob@annotators.test")
REJECTED = ("normbank_0",)  # both annotators reject it: never released
SPOC_FILES = {  # the accepted tasks generated for an AI2-THOR scene, and the SPOC file each is released as
    "alfred_trial_T20190908_205022_607865": "Fire_CookTurnOffSteps_Egg_Microwave_00000.json",
    "normbank_1": "Fire_CookTurnOffSteps_Potato_StoveKnob_00000.json",  # a timing danger: its safety effort waived
    "neiss_231234262": "Injury_CloseSteps_Cabinet_None_00000.json",
    "neiss_150306562": "Injury_CloseSteps_Drawer_None_00000.json",
}
HUB_TOKEN = "hf_sentinel_token_5e1d9c"


def _generate(outputs: Path) -> list[Path]:
    runs = []
    with running_replay_server(REPLAY, latency_ms=0) as url:
        for source, calls in RUNS.items():
            for selection in calls:
                run_generation(
                    GenerateOptions(source=source, out=outputs, run_name=f"{source}-run", concurrency=4, **selection),
                    settings=GenerationSettings(planner_time_limit=30),
                    llm_config=LLMConfig(
                        base_url=url, model="deepseek-chat", db_path=outputs / f"{source}-run" / "llm.sqlite", timeout_s=10
                    ),
                )
            runs.append(outputs / f"{source}-run")
    return runs


def _review(runs: list[Path], server_dir: Path) -> None:
    check_installation()
    handle = start_server(server_dir, free_port(), ADMIN, PASSWORD, TOKEN)
    try:
        from label_studio_sdk import LabelStudio

        config = ReviewConfig(url=handle.url, api_key=TOKEN, username=ADMIN, password=PASSWORD, timeout=20)
        admin = LabelStudio(base_url=handle.url, api_key=TOKEN)
        people = [annotator_client(handle.url, annotator_token(handle.url, admin, email), email) for email in ANNOTATORS]
        for run in runs:
            store = RunStore(run)
            try:
                push_run(store, config, annotators_per_task=2)
                for row in store.ledger.records(state="in_review"):
                    vote = Submission("reject", reasons=("plans_not_sensible",)) if row.task_id in REJECTED else Submission("accept")
                    for person in people:
                        submit(person, ls_task_id(store, row.task_id), vote)
                pull_run(store, config)
            finally:
                store.ledger.close()
    finally:
        stop_server(handle)


@pytest.fixture(scope="session")
def reviewed_runs(tmp_path_factory) -> list[Path]:
    """One run per source, reviewed (read-only: a test that changes a run works on `copied_runs`)."""
    root = tmp_path_factory.mktemp("pipeline")
    runs = _generate(root / "outputs")
    _review(runs, root / "labelstudio")
    return runs


@pytest.fixture
def copied_runs(reviewed_runs, tmp_path):
    """copied_runs(*sources) -> copies of the reviewed runs of those sources, for a test to change."""

    def copy(*sources: str) -> list[Path]:
        chosen = [run for run in reviewed_runs if run.name.removesuffix("-run") in sources]
        return [Path(shutil.copytree(run, tmp_path / "outputs" / run.name)) for run in chosen]

    return copy


@pytest.fixture
def hub(tmp_path):
    """A Hub-compatible server on loopback (writes need HUB_TOKEN); yields its URL."""
    with running_hub_server(tmp_path / "hub", token=HUB_TOKEN) as url:
        yield url


# -- reading back what was published --------------------------------------------------------------
EMAIL = re.compile(rb"[\w.%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
ABSOLUTE_PATH = re.compile(rb"(?<![\w.~:/\\-])/(?:[\w.@%+-]+/)+[\w.@%+-]*")


def published_bytes(folder: Path) -> dict[str, bytes]:
    """Every file of a published folder, with compressed content opened: tar.gz as the tar's bytes,
    parquet as the JSON of its rows (datasets' own reader would hide nothing more)."""
    import pyarrow.parquet as pq

    found = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and ".cache" not in p.parts):
        name = path.relative_to(folder).as_posix()
        data = path.read_bytes()
        found[name] = data
        if name.endswith(".gz"):
            found[name + " (opened)"] = gzip.decompress(data)
        elif name.endswith(".parquet"):
            rows = pq.read_table(io.BytesIO(data)).to_pylist()
            found[name + " (rows)"] = json.dumps(rows, ensure_ascii=False).encode()
    return found


def machine_folders(*extra: Path) -> list[bytes]:
    folders = {Path.home(), REPO, Path(sys.prefix), *extra}
    return sorted({str(f).encode() for f in folders} | {str(f.resolve()).encode() for f in folders})


def leaks(folder: Path, *extra_folders: Path) -> list[str]:
    """Every machine path and e-mail address in the published bytes of `folder` (an empty list when
    it has none): absolute paths, the home, checkout and Python folders and `extra_folders`."""
    found = []
    for name, data in published_bytes(folder).items():
        for folder_name in machine_folders(*extra_folders):
            if folder_name in data:
                found.append(f"{name}: {folder_name.decode()}")
        if not name.endswith((".png", ".parquet", ".gz")):  # compressed bytes: the opened forms are read
            found += [f"{name}: e-mail {m.group().decode(errors='replace')}" for m in EMAIL.finditer(data)]
            found += [f"{name}: path {m.group().decode(errors='replace')}" for m in ABSOLUTE_PATH.finditer(data)]
    return found
