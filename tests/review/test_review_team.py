"""Label Studio on PostgreSQL for a team, as `safeforge review server start --database postgresql`
runs it: a real server with its own local PostgreSQL (the system's package, which scripts/setup.sh
installs). Three annotators take tasks from their queues and submit at once while two folders push
the same run; the server's data survives a restart through the CLI; a task lock expires."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import psutil
import pytest
from busy_machine import is_running
from label_studio_sdk import LabelStudio
from review_helpers import ADMIN, PASSWORD, TOKEN, Submission, free_port, join_as, ls_task_id, submit, token_of

from safeforge.cli.main import main
from safeforge.review import (
    ReviewConfig,
    ServerError,
    _postgres,
    check_installation,
    project_title,
    pull_run,
    push_run,
    review_status,
    running_server,
    start_server,
    stop_server,
)
from safeforge.review._client import LabelStudioClient
from tests.doubles.review_demo import EXAMPLES, demo_run

LOCK_TTL_S = 300  # a team server locks an opened task for 5 minutes; the test moves a lock's expiry into the past
ALL_EXAMPLES = sorted(p.name for p in EXAMPLES.iterdir() if (p / "metadata.json").exists())


class TeamServer:
    """The module's server; a test may stop and start it again on the same data dir."""

    def __init__(self, base: Path):
        self.data_dir, self.port = base / "labelstudio", free_port()
        self.handle = start_server(self.data_dir, self.port, ADMIN, PASSWORD, TOKEN, database="postgresql", task_lock_ttl=LOCK_TTL_S)

    @property
    def config(self) -> ReviewConfig:
        return ReviewConfig(url=self.handle.url, api_key=TOKEN, username=ADMIN, password=PASSWORD, timeout=30)

    @property
    def admin(self) -> LabelStudio:
        return LabelStudio(base_url=self.handle.url, api_key=TOKEN)


@pytest.fixture(scope="module")
def team():
    try:
        check_installation(database="postgresql")
    except ServerError as exc:
        if shutil.which("apt-get") is None and "PostgreSQL" in str(exc):
            pytest.skip(f"{exc}, and this machine has no apt-get to install it with")
        pytest.fail(f"{exc} (CI runs scripts/setup.sh, which installs both)")
    # PostgreSQL runs as the `postgres` user when the tests run as root: a folder it may enter
    base = Path(tempfile.mkdtemp(prefix="safeforge-team-"))
    base.chmod(0o711)
    server = TeamServer(base)
    yield server
    stop_server(server.handle)
    shutil.rmtree(base, ignore_errors=True)


def _next_task(url: str, token: str, project_id: int) -> int | None:
    """The task Label Studio's queue gives this annotator next (and locks for them), or None."""
    response = httpx.get(f"{url}/api/projects/{project_id}/next/", headers={"Authorization": f"Token {token}"}, timeout=30, trust_env=False)
    if response.status_code == 404:
        return None
    response.raise_for_status()
    return response.json()["id"]


def test_several_annotators_at_once_while_two_folders_push_the_same_run(team, tmp_path, monkeypatch):
    """On SQLite this made three projects of one title ("database is locked", then the SDK retried)."""
    stores = [demo_run(tmp_path / folder / "teamrun", ALL_EXAMPLES) for folder in ("laptop-a", "laptop-b")]
    both_create = threading.Barrier(2, timeout=60)  # both pushes found no project: each creates one, at once
    create = LabelStudioClient.create_project

    def create_at_once(self, *args, **kwargs):
        both_create.wait()
        return create(self, *args, **kwargs)

    monkeypatch.setattr(LabelStudioClient, "create_project", create_at_once)
    with ThreadPoolExecutor(2) as pool:
        pushed = list(pool.map(lambda store: push_run(store, team.config, annotators_per_task=2), stores))
    assert pushed[0].project_id == pushed[1].project_id  # a run name is one project, whatever folder pushes it
    assert sorted(p.created_project for p in pushed) == [False, True]
    assert any("another push created project" in w for p in pushed for w in p.warnings)
    project_id = pushed[0].project_id
    assert [p.id for p in team.admin.projects.list(title=project_title(stores[0]))] == [project_id]
    tasks = list(team.admin.tasks.list(project=project_id))
    assert sorted(t.data["task_id"] for t in tasks) == ALL_EXAMPLES  # each task once
    assert not [w for p in pushed for w in p.warnings if " twice " in w]  # no warning of a copy the other push removed
    assert all(r.state == "in_review" for store in stores for r in store.ledger.records())

    people = [f"{name}@team.test" for name in ("ana", "ben", "chloe")]
    clients = {email: join_as(team.handle.url, team.admin, email) for email in people}
    tokens = {email: token_of(team.handle.url, email) for email in people}
    annotated: dict[str, list[int]] = {email: [] for email in people}
    start = threading.Barrier(len(people))

    def work(email: str) -> None:
        start.wait()  # all three at once
        while (task := _next_task(team.handle.url, tokens[email], project_id)) is not None:
            submit(clients[email], task, Submission("accept" if task % 3 else "reject", reasons=("other",), lead_time=5.0))
            annotated[email].append(task)

    with ThreadPoolExecutor(len(people)) as pool:
        list(pool.map(work, people))  # an error in any annotator's session fails the test here
    by_task = {t.id: [_user(a["completed_by"]) for a in team.admin.tasks.get(t.id).annotations] for t in tasks}
    assert all(len(who) == 2 and len(set(who)) == 2 for who in by_task.values()), by_task
    assert sum(len(done) for done in annotated.values()) == 2 * len(tasks)

    result = pull_run(stores[0], team.config)
    assert sorted(result.accepted + result.rejected) == ALL_EXAMPLES and not result.pending
    assert result.agreement.tasks == len(ALL_EXAMPLES)


def test_an_opened_task_is_locked_for_its_annotator_until_the_lock_expires(team, tmp_path):
    store = demo_run(tmp_path / "lockrun", [ALL_EXAMPLES[0]])
    project_id = push_run(store, team.config).project_id
    dora, eli = (f"{name}@team.test" for name in ("dora", "eli"))
    clients = {email: join_as(team.handle.url, team.admin, email) for email in (dora, eli)}
    url, task = team.handle.url, ls_task_id(store, ALL_EXAMPLES[0])
    assert _next_task(url, token_of(url, dora), project_id) == task  # dora opens it and walks away
    assert _next_task(url, token_of(url, eli), project_id) is None  # locked for dora
    held = review_status(store, data_dir=team.data_dir)  # read from the team server's PostgreSQL
    assert [(r.annotator, r.locked, r.pending) for r in held.annotators] == [(dora, (ALL_EXAMPLES[0],), (ALL_EXAMPLES[0],))]
    _expire_locks(team, task)  # the lock's 5 minutes pass
    assert review_status(store, data_dir=team.data_dir).annotators == []  # the lock expired
    assert _next_task(url, token_of(url, eli), project_id) == task  # the lock expired: eli gets it
    submit(clients[eli], task, Submission("accept"))
    assert _next_task(url, token_of(url, dora), project_id) is None  # done: nothing left for dora


def _expire_locks(team: TeamServer, task: int) -> None:
    """Move the expiry of the task's locks into the past, in the server's PostgreSQL: Label Studio
    compares a lock's `expire_at` with the database's clock, so this is the lock's time passing."""
    env = _postgres.Cluster(team.data_dir.resolve()).label_studio_env()
    psql = [str(_postgres.bin_dir() / "psql"), "-h", env["POSTGRE_HOST"], "-p", env["POSTGRE_PORT"], "-U", env["POSTGRE_USER"]]
    query = f"UPDATE tasks_tasklock SET expire_at = now() - interval '1 second' WHERE task_id = {int(task)}"
    done = subprocess.run([*psql, "-d", env["POSTGRE_NAME"], "-At", "-c", query], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "UPDATE 1", done.stderr


def test_the_team_server_keeps_its_data_across_a_restart_by_the_cli(team, tmp_path, monkeypatch, capsys):
    store = demo_run(tmp_path / "keeprun", [ALL_EXAMPLES[1]])
    project_id = push_run(store, team.config).project_id
    submit(join_as(team.handle.url, team.admin, "fay@team.test"), ls_task_id(store, ALL_EXAMPLES[1]), Submission("accept"))
    _use_team_server(team, monkeypatch)
    postgres_pid = team.handle.postgres.pid
    assert main(["review", "server", "stop"]) == 0
    assert "and its PostgreSQL server" in capsys.readouterr().out
    assert not is_running(team.handle.pid) and not is_running(postgres_pid)
    assert main(["review", "server", "start", "--database", "sqlite"]) == 2  # a data dir keeps its database
    assert "holds a postgresql database" in capsys.readouterr().err
    assert main(["review", "server", "start"]) == 0
    assert "on postgresql" in capsys.readouterr().out
    assert main(["review", "server", "status", "--json"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["database"] == "postgresql" and status["postgres_pid"] != postgres_pid
    team.handle = running_server(team.data_dir)
    assert [t.data["task_id"] for t in team.admin.tasks.list(project=project_id)] == [ALL_EXAMPLES[1]]
    assert pull_run(store, team.config).accepted == [ALL_EXAMPLES[1]]  # the vote made before the restart


def _use_team_server(team: TeamServer, monkeypatch) -> None:
    """Point the command line at the team server, as its users' environment does."""
    for name, value in {
        "LABEL_STUDIO_URL": team.handle.url,
        "LABEL_STUDIO_API_KEY": TOKEN,
        "LABEL_STUDIO_USERNAME": ADMIN,
        "LABEL_STUDIO_PASSWORD": PASSWORD,
        "SAFEFORGE_LABELSTUDIO_DATA": str(team.data_dir),
    }.items():
        monkeypatch.setenv(name, value)


def _user(completed_by) -> int:
    return completed_by["id"] if isinstance(completed_by, dict) else completed_by


def test_postgresql_refuses_a_data_dir_its_user_cannot_enter(team):
    if os.geteuid() != 0:
        pytest.skip("PostgreSQL runs as this user, who can enter the data dir")
    locked = Path(tempfile.mkdtemp(prefix="safeforge-private-"))  # mode 0700, root's
    try:
        with pytest.raises(ServerError, match=rf"runs as user 'postgres'.*cannot enter {locked} \(mode drwx------\)"):
            start_server(locked / "ls", free_port(), ADMIN, PASSWORD, TOKEN, database="postgresql")
    finally:
        shutil.rmtree(locked)


def test_services_stop_the_team_server_with_its_postgresql(team, tmp_path, monkeypatch, capsys):
    """`safeforge services stop` stops a team's Label Studio and then its PostgreSQL, and a
    PostgreSQL left behind by a server that died is stopped too."""
    _use_team_server(team, monkeypatch)
    monkeypatch.setenv("SAFEFORGE_STATE_DIR", str(tmp_path / "state"))  # no service this machine runs is touched
    first = team.handle
    assert main(["services", "status"]) == 3  # only Label Studio runs here
    assert f"{first.log_path}  (on postgresql)" in capsys.readouterr().out
    assert main(["services", "stop"]) == 0
    assert f"label-studio: stopped (pid {first.pid} and its process group, then its PostgreSQL server)" in capsys.readouterr().out
    assert not is_running(first.pid) and not is_running(first.postgres.pid)

    assert main(["review", "server", "start"]) == 0 and "on postgresql" in capsys.readouterr().out
    second = running_server(team.data_dir)
    psutil.Process(second.pid).kill()  # the server dies; its PostgreSQL stays
    psutil.Process(second.pid).wait(timeout=30)
    assert is_running(second.postgres.pid)
    assert main(["services", "stop"]) == 0
    assert "label-studio: its PostgreSQL server was left running; stopped it" in capsys.readouterr().out
    assert not is_running(second.postgres.pid)
    team.handle = TeamServer(team.data_dir.parent).handle  # for the tests after this one
