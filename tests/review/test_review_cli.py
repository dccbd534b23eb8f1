"""`safeforge review server start|status|stop` and `review push|pull|status` as a user runs them,
on a server of their own that must leave no process behind."""

from __future__ import annotations

import json
import os
import socket

import psutil
import pytest
from label_studio_sdk import LabelStudio
from review_helpers import Submission, free_port, ls_task_id, submit

from safeforge.cli.main import main
from safeforge.review import ServerError, check_installation, start_server
from tests.doubles.review_demo import demo_run

KITCHEN, BLEACH = "kitchen_mopped_floor_hot_soup", "bathroom_bleach_bucket"


def test_server_and_review_commands_end_to_end(tmp_path, monkeypatch, capsys):
    port = free_port()
    monkeypatch.setenv("LABEL_STUDIO_URL", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", "cli-test-token-123")
    monkeypatch.setenv("LABEL_STUDIO_USERNAME", "cli@review.test")
    monkeypatch.setenv("LABEL_STUDIO_PASSWORD", "cli-password-1")
    monkeypatch.setenv("SAFEFORGE_LABELSTUDIO_DATA", str(tmp_path / "ls"))
    monkeypatch.setenv("SAFEFORGE_OUTPUTS", str(tmp_path / "outputs"))
    assert main(["review", "server", "status"]) == 3
    assert main(["review", "server", "start"]) == 0
    started = json.loads((tmp_path / "ls" / "server.json").read_text())
    try:
        assert started["url"] == f"http://127.0.0.1:{port}"
        assert "cli-test-token-123" not in (tmp_path / "ls" / "server.json").read_text()
        capsys.readouterr()
        assert main(["review", "server", "status", "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["pid"] == started["pid"]
        assert main(["review", "server", "start"]) == 0  # already running: reused
        assert "already runs" in capsys.readouterr().out

        store = demo_run(tmp_path / "outputs" / "demo", [KITCHEN, BLEACH])
        for bad, says in (
            (["--annotators-per-task", "0"], "'0' is not a whole number from 1 to 100"),
            (["--annotators-per-task", "-1"], "'-1' is not a whole number from 1 to 100"),
            (["--overlap-share", "1.5"], "'1.5' is not a number > 0 and <= 1"),
            (["--overlap-share", "nan"], "'nan' is not a number > 0 and <= 1"),
        ):
            with pytest.raises(SystemExit) as refused:
                main(["review", "push", "demo", *bad])
            assert refused.value.code == 2 and says in capsys.readouterr().err
        assert main(["review", "push", "demo", "--adjudicator", "Lead@Review.test"]) == 0
        pushed = capsys.readouterr().out
        assert "imported 2 task(s); 0 already there; 2 record(s) now in review" in pushed
        assert "adjudicators of run: lead@review.test (were: none)" in pushed
        assert main(["review", "push", "demo", "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["imported"] == []

        admin = LabelStudio(base_url=started["url"], api_key="cli-test-token-123")
        submit(admin, ls_task_id(store, KITCHEN), Submission("reject", reasons=("not_a_robot_task",)))
        assert main(["review", "pull", str(store.root)]) == 0
        assert "accepted 0, rejected 1, still pending 1" in capsys.readouterr().out
        assert main(["review", "status", "demo", "--json"]) == 0
        status = json.loads(capsys.readouterr().out)
        assert (status["total"]["pending"], status["total"]["rejected"], status["total"]["rejection_rate"]) == (1, 1, 100.0)
        assert status["by_source"]["neiss"]["reasons"] == {"not_a_robot_task": 1}
        assert main(["review", "status", "demo", "--plot", str(tmp_path / "agreement.png")]) == 0
        shown = capsys.readouterr()
        assert "Not a robot task" in shown.out and "Adjudicators: lead@review.test" in shown.out
        assert (tmp_path / "agreement.png").read_bytes().startswith(b"\x89PNG") and "agreement plot:" in shown.err
        submit(admin, ls_task_id(store, BLEACH), Submission("accept"))
        assert main(["review", "pull", "demo"]) == 0
        capsys.readouterr()
        assert main(["publish", "demo", "--version", "v1", "--out", str(tmp_path / "release")]) == 0  # the run by name, as review takes it
        assert "release v1 (cc-by-sa-4.0): 1 task(s)" in capsys.readouterr().out  # a NormBank task
        assert main(["review", "pull", "no-such-run"]) == 2
        assert "no run 'no-such-run'" in capsys.readouterr().err
    finally:
        assert main(["review", "server", "stop"]) == 0
    assert not psutil.pid_exists(started["pid"]) or psutil.Process(started["pid"]).status() == psutil.STATUS_ZOMBIE
    assert not [p for p in psutil.process_iter() if _in_group(p, started["pid"])]
    with socket.socket() as probe:
        assert probe.connect_ex(("127.0.0.1", port)) != 0  # nothing listens there any more
    assert not (tmp_path / "ls" / "server.json").exists()
    assert main(["review", "server", "status"]) == 3


def _in_group(process: psutil.Process, pgid: int) -> bool:
    try:
        return os.getpgid(process.pid) == pgid and process.status() != psutil.STATUS_ZOMBIE
    except (ProcessLookupError, psutil.Error):
        return False


def test_start_refuses_a_port_in_use(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(ServerError, match=f"port {port} on 127.0.0.1 is already in use"):
            start_server(tmp_path / "ls", port, "a@b.c", "password-1", "token-123456")
    assert not (tmp_path / "ls").exists()


def test_missing_installation_names_the_setup_script(tmp_path):
    with pytest.raises(ServerError, match=r"Label Studio is not installed .*run scripts/setup_labelstudio\.sh"):
        check_installation(tmp_path / "no-venv")
    (tmp_path / "venv" / "bin").mkdir(parents=True)
    (tmp_path / "venv" / "bin" / "label-studio").write_text("")
    with pytest.raises(ServerError, match=r"template data dir .* missing .*run scripts/setup_labelstudio\.sh"):
        check_installation(tmp_path / "venv")
