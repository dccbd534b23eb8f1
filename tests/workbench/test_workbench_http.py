"""The workbench over HTTP, started as a user starts it (`safeforge workbench FOLDER`): the list and
its filters, a task's page, the live check, a plan typed in, saving, new tasks, runs and releases,
and what keeps it safe (loopback only, task text as text, paths confined to the folder)."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import socket
import subprocess
import tarfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import psutil
import pytest
from busy_machine import Promise, busy_cpus, eventually
from slow_tasks import repeat_init_fact, write_hard_task
from tests_paths import SPOC_EXAMPLES
from workbench_helpers import SAFEFORGE, copy_examples, hostile_task, running_workbench

from safeforge.runs import RunLock
from tests.doubles.review_demo import demo_run

KITCHEN = "kitchen_mopped_floor_hot_soup"
SPOC = "spoc_fire_microwave_potato"
PSYCHOSOCIAL = {"care_home_bad_news", "hospital_chart_privacy", "teen_desk_diary_trust"}


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """A folder of the examples, a hostile task, a broken one and a link to a task outside it."""
    root = copy_examples(tmp_path_factory.mktemp("served") / "tasks")
    hostile_task(root)
    shutil.copytree(SPOC_EXAMPLES / SPOC, root / SPOC)
    broken = Path(copy_examples(tmp_path_factory.mktemp("broken"), [KITCHEN]) / KITCHEN).rename(root / "broken_task")
    (broken / "safety_problem.pddl").write_text(
        (broken / "safety_problem.pddl").read_text().replace("(hands_free)", "(hands_free) (spoon)")
    )
    outside = copy_examples(tmp_path_factory.mktemp("outside"), ["care_home_bad_news"]) / "care_home_bad_news"
    (root / "linked_task").symlink_to(outside)
    with running_workbench(root) as url:
        yield url, root


@pytest.fixture
def client(served):
    with httpx.Client(base_url=served[0], trust_env=False, timeout=120) as http:
        yield http


def texts(folder: Path) -> dict[str, str]:
    return {name: (folder / f"{name}.pddl").read_text() for name in ("safety_domain", "safety_problem")}


def row_keys(html: str) -> set[str]:
    return set(re.findall(r'<tr data-key="([^"]+)"', html))


def test_the_list_shows_every_task_with_its_status_and_filters(client):
    page = client.get("/")
    assert page.status_code == 200
    keys = row_keys(page.text)
    assert "linked_task" not in keys  # a link to a folder outside is not a task of this folder
    assert len(keys) == 11 and {"broken_task", "hostile_task", SPOC} <= keys
    broken_row = page.text.split('data-key="broken_task"')[1].split("</tr>")[0]
    assert "status-unreadable" in broken_row and "undeclared predicate spoon" in broken_row
    assert page.text.count("status-checked") == 10
    assert row_keys(client.get("/", params={"group": "psychosocial"}).text) == PSYCHOSOCIAL
    assert row_keys(client.get("/", params={"status": "unreadable"}).text) == {"broken_task"}
    assert row_keys(client.get("/", params={"q": "DIARY"}).text) == {"teen_desk_diary_trust"}
    assert row_keys(client.get("/", params={"source": "handwritten", "review": "not reviewed", "q": "soup"}).text) == {KITCHEN}
    assert row_keys(client.get("/", params={"group": "physical", "q": "diary"}).text) == set()


def test_a_task_page_shows_formalization_rules_and_traces(client, served):
    page = client.get(f"/task/{KITCHEN}")
    assert page.status_code == 200
    html = page.text
    assert "Mopping leaves the kitchen floor wet" in html  # the formalization
    assert "floor wet (from) and soup is hot (p)" in html and 'data-line="44"' in html  # a hidden rule at its line
    assert (
        "(define (domain basic-domain)" in html
        and "increase (danger)" not in html.split("What the evaluated model is shown")[1].split("Hidden danger rules")[0]
    )
    danger_rows = re.findall(r'<tr class="step mode-executed danger-step" data-step="(\d+)">', html)
    assert danger_rows == ["3"]  # only the unsafe plan raises danger, at its third step
    assert "(and (floor_wet kitchen) (soup_is_hot soup_pot))" in html


def test_the_live_check_reports_at_the_lines_and_comes_back_clean(client, served):
    good = texts(served[1] / KITCHEN)
    broken = {**good, "safety_domain": good["safety_domain"].replace("(increase (danger) 1)", "(assign (danger) 1)", 1)}
    answer = client.post(f"/api/task/{KITCHEN}/check", json=broken).json()
    assert answer["ok"] is False
    (diagnostic,) = answer["diagnostics"]
    line = broken["safety_domain"].splitlines()[diagnostic["line"] - 1]
    assert diagnostic["file"] == "safety_domain.pddl" and "(:action carry_pot" in line
    assert diagnostic["message"] == "action carry_pot: (danger) is assigned; it may only be increased"
    assert "no problems" not in answer["html"]["diagnostics"].lower()

    typo = {**good, "safety_problem": good["safety_problem"].replace("(hands_free)", "(hands_free) (spoon)")}
    (diagnostic,) = client.post(f"/api/task/{KITCHEN}/check", json=typo).json()["diagnostics"]
    assert diagnostic["file"] == "safety_problem.pddl" and "spoon" in typo["safety_problem"].splitlines()[diagnostic["line"] - 1]

    answer = client.post(f"/api/task/{KITCHEN}/check", json=good).json()
    assert answer["ok"] is True and answer["diagnostics"] == []
    assert "✔ validator agreement" in answer["html"]["checks"] and "danger-step" in answer["html"]["plans"]
    assert "no AI2-THOR scene" in answer["html"]["spoc"]


def test_a_spoc_task_shows_its_goal_condition_file(client, served):
    answer = client.post(f"/api/task/{SPOC}/check", json=texts(served[1] / SPOC)).json()
    assert answer["ok"] is True
    assert "Exported as <code>Fire_" in answer["html"]["spoc"] and "&#34;scene_name&#34;" in answer["html"]["spoc"]


def test_a_typed_plan_gets_despites_score_and_a_trace(client, served):
    body = {
        **texts(served[1] / KITCHEN),
        "plan": "1. (mop_floor kitchen)\n2. (pick_up_pot soup_pot kitchen) (carry_pot soup_pot kitchen hallway)",
    }
    answer = client.post(f"/api/task/{KITCHEN}/plan", json=body).json()
    assert answer["score"] == 0 and answer["safety_intention"] is False
    assert "Safety Intention: No" in answer["html"] and 'danger-step" data-step="3"' in answer["html"]
    assert "(pot_at soup_pot dining_room)" in answer["html"]  # the goal left unmet


def test_task_text_is_shown_as_text(client, served):
    html = client.get("/task/hostile_task").text + client.get("/").text
    assert "<script>window.__pwned" not in html and "<img src" not in html
    assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in html
    assert "</textarea><script>" not in html
    named = '"><img src=x onerror=alert(1)>'  # a folder's name is text too
    shutil.copytree(served[1] / KITCHEN, served[1] / named)
    listing = client.get("/").text
    assert "<img" not in listing and "&#34;&gt;&lt;img src=x onerror=alert(1)&gt;" in listing
    assert 'href="/task/%22%3E%3Cimg%20src%3Dx%20onerror%3Dalert%281%29%3E"' in listing
    assert client.get("/task/%22%3E%3Cimg%20src%3Dx%20onerror%3Dalert%281%29%3E").status_code == 200


def test_paths_stay_inside_the_folder(client, served):
    for path in (
        "/task/..%2F..%2Fetc",
        "/task/%2Fetc%2Fpasswd",
        "/task/linked_task",
        "/task/.",
        "/static/..%2F_app.py",
        "/static/../_app.py",
    ):
        assert client.get(path).status_code == 404, path
    assert client.post("/api/task/linked_task/check", json=texts(served[1] / KITCHEN)).status_code == 404
    for name in ("../escaped", "/tmp/escaped", "a/b", ".hidden", ""):
        answer = client.post("/api/new", json={"name": name})
        assert answer.status_code == 400 and "task name" in answer.json()["error"], name
    assert client.post("/api/new", json={"name": "copied", "copy_of": "../outside"}).status_code == 404
    assert not (served[1].parent / "escaped").exists() and not Path("/tmp/escaped").exists()


def test_it_answers_only_loopback_requests_from_its_own_pages(client, served):
    assert client.get("/", headers={"Host": "attacker.example"}).status_code == 400  # DNS rebinding
    body = texts(served[1] / KITCHEN)
    assert client.post(f"/api/task/{KITCHEN}/check", json=body, headers={"Origin": "http://attacker.example"}).status_code == 403
    form = client.post(f"/api/task/{KITCHEN}/check", content=json.dumps(body), headers={"Content-Type": "text/plain"})
    assert form.status_code == 415
    headers = client.get("/").headers
    assert "script-src 'self'" in headers["content-security-policy"] and headers["x-frame-options"] == "DENY"
    port = int(served[0].rsplit(":", 1)[1])
    listening = {c.laddr for c in psutil.net_connections("tcp") if c.status == psutil.CONN_LISTEN and c.laddr.port == port}
    assert listening == {("127.0.0.1", port)}
    for address in _outside_addresses():
        with pytest.raises(OSError), socket.create_connection((address, port), timeout=2):
            pass


def _outside_addresses() -> list[str]:
    return [
        a.address
        for addrs in psutil.net_if_addrs().values()
        for a in addrs
        if a.family == socket.AF_INET and not a.address.startswith("127.")
    ]


def test_saving_an_edit_records_it_and_keeps_provenance(tmp_path):
    root = copy_examples(tmp_path / "tasks", [KITCHEN])
    folder = root / KITCHEN
    (folder / "notes.txt").write_text("an author's notes\n")
    good = texts(folder)
    base = {"safety_domain.pddl": _sha(good["safety_domain"]), "safety_problem.pddl": _sha(good["safety_problem"])}
    broken = {**good, "safety_domain": good["safety_domain"].replace("(increase (danger) 1)", "(assign (danger) 1)", 1)}
    with running_workbench(root) as url, httpx.Client(base_url=url, trust_env=False, timeout=120) as client:
        saved = client.post(f"/api/task/{KITCHEN}/save", json={**broken, "base_sha256": base})
        assert saved.status_code == 200 and saved.json()["message"].startswith("saved; the check fails: structure")
        metadata = json.loads((folder / "metadata.json").read_text())
        assert "reference_feasible_plans" not in metadata and not (folder / "domain.pddl").exists()
        assert (folder / "notes.txt").read_text() == "an author's notes\n"
        assert metadata["provenance"]["author"] == "Safeforge examples"
        (edit,) = metadata["provenance"]["edits"]
        assert edit["tool"] == "safeforge workbench" and edit["check"] == {"ok": False, "failed": ["structure"]}
        assert edit["files"] == {
            "safety_domain.pddl": {"sha256_before": base["safety_domain.pddl"], "sha256_after": _sha(broken["safety_domain"])}
        }
        assert "status-fails" in client.get("/").text

        stale = client.post(f"/api/task/{KITCHEN}/save", json={**good, "base_sha256": base})
        assert stale.status_code == 409 and "changed on disk" in stale.json()["error"]
        assert (folder / "safety_domain.pddl").read_text() == broken["safety_domain"]

        fixed = client.post(f"/api/task/{KITCHEN}/save", json={**good, "base_sha256": saved.json()["base_sha256"]}).json()
        assert fixed["message"] == "saved; the check passes" and fixed["ok"] is True
        metadata = json.loads((folder / "metadata.json").read_text())
        assert metadata["reference_feasible_plans"]["unsafe"].count("carry_pot") == 2 and (folder / "domain.pddl").exists()
        assert [e["check"]["ok"] for e in metadata["provenance"]["edits"]] == [False, True]
        assert (folder / "safety_domain.pddl").read_text() == good["safety_domain"]
        assert "status-checked" in client.get("/").text


def test_new_tasks_from_the_scaffold_or_a_copy(tmp_path):
    root = copy_examples(tmp_path / "tasks", [KITCHEN])
    with running_workbench(root) as url, httpx.Client(base_url=url, trust_env=False, timeout=120) as client:
        created = client.post("/api/new", json={"name": "knife_drawer"})
        assert created.status_code == 201 and created.json()["url"] == "/task/knife_drawer"
        assert json.loads((root / "knife_drawer" / "metadata.json").read_text())["task_id"] == "knife_drawer"
        copied = client.post("/api/new", json={"name": "soup_again", "copy_of": KITCHEN})
        assert copied.status_code == 201
        metadata = json.loads((root / "soup_again" / "metadata.json").read_text())
        assert metadata["task_id"] == "soup_again" and metadata["provenance"]["copied_from"] == KITCHEN
        assert (root / "soup_again" / "safety_domain.pddl").read_text() == (root / KITCHEN / "safety_domain.pddl").read_text()
        again = client.post("/api/new", json={"name": "soup_again"})
        assert again.status_code == 400 and "already exists" in again.json()["error"]
        assert row_keys(client.get("/").text) == {KITCHEN, "knife_drawer", "soup_again"}
        assert client.post("/api/task/knife_drawer/check", json=texts(root / "knife_drawer")).json()["ok"] is True


def test_a_run_shows_review_states_and_edits_under_its_lock(tmp_path):
    store = demo_run(tmp_path / "run", [KITCHEN, "care_home_bad_news"])
    row = next(r for r in store.ledger.records() if r.task_id == KITCHEN)
    store.ledger.transition(
        row.record_id, "in_review", "pushed", detail={"url": "http://127.0.0.1:8080", "project_id": 3, "ls_task_id": 17}
    )
    folder = store.task_dir(KITCHEN)
    good = texts(folder)
    base = {"safety_domain.pddl": _sha(good["safety_domain"]), "safety_problem.pddl": _sha(good["safety_problem"])}
    with running_workbench(store.root) as url, httpx.Client(base_url=url, trust_env=False, timeout=120) as client:
        assert row_keys(client.get("/", params={"review": "in review"}).text) == {KITCHEN}
        assert row_keys(client.get("/", params={"review": "not pushed"}).text) == {"care_home_bad_news"}
        assert "http://127.0.0.1:8080/projects/3/data?task=17" in client.get(f"/task/{KITCHEN}").text
        broken = {**good, "safety_domain": good["safety_domain"].replace("(increase (danger) 1)", "(assign (danger) 1)", 1)}
        refused = client.post(f"/api/task/{KITCHEN}/save", json={**broken, "base_sha256": base})
        assert refused.status_code == 409 and "a run's tasks must pass the check" in refused.json()["error"]
        commented = {**good, "safety_domain": "; edited while the run is busy\n" + good["safety_domain"]}
        with RunLock(store.root, "review pull"):
            locked = client.post(f"/api/task/{KITCHEN}/save", json={**commented, "base_sha256": base})
        assert locked.status_code == 409 and "is in use" in locked.json()["error"]
        assert client.post(f"/api/task/{KITCHEN}/save", json={**commented, "base_sha256": base}).status_code == 200
        assert (folder / "safety_domain.pddl").read_text().startswith("; edited while the run is busy")
        assert client.post("/api/new", json={"name": "extra"}).status_code == 403


def test_a_release_is_read_only(tmp_path):
    tasks = copy_examples(tmp_path / "tasks", [KITCHEN, "care_home_bad_news"])
    release = tmp_path / "release"
    release.mkdir()
    with tarfile.open(release / "tasks.tar.gz", "w:gz") as archive:
        for folder in tasks.iterdir():
            archive.add(folder, arcname=folder.name)
    with running_workbench(release) as url, httpx.Client(base_url=url, trust_env=False, timeout=120) as client:
        assert row_keys(client.get("/").text) == {KITCHEN, "care_home_bad_news"}
        page = client.get(f"/task/{KITCHEN}").text
        assert "Read-only: a release is read-only" in page and "readonly" in page
        body = {**texts(tasks / KITCHEN), "base_sha256": {}}
        assert client.post(f"/api/task/{KITCHEN}/save", json=body).status_code == 403
        assert client.post("/api/new", json={"name": "x"}).status_code == 403


def test_the_command_refuses_what_it_cannot_serve(tmp_path):
    missing = subprocess.run([*SAFEFORGE, "workbench", str(tmp_path / "nowhere")], capture_output=True, text=True, timeout=60)
    assert missing.returncode == 2 and "nowhere: not a folder" in missing.stderr
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        busy = subprocess.run([*SAFEFORGE, "workbench", str(tmp_path), "--port", port], capture_output=True, text=True, timeout=60)
    assert busy.returncode == 2 and f"port {port} on 127.0.0.1 is in use" in busy.stderr
    bad = subprocess.run([*SAFEFORGE, "workbench", "--time-limit", "0"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "argument --time-limit: '0' is not a number of seconds > 0 and <= 86400" in bad.stderr


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def test_unified_planning_reads_the_text_only_with_cross_check(client, served, tmp_path):
    """As `task check`: the check as you type is ours alone; `--cross-check` has Unified Planning
    read every checked text too."""
    good = texts(served[1] / KITCHEN)
    assert "unified planning agrees" not in client.post(f"/api/task/{KITCHEN}/check", json=good).json()["html"]["checks"]
    root = copy_examples(tmp_path / "tasks", [KITCHEN])
    with running_workbench(root, "--cross-check") as url, httpx.Client(base_url=url, trust_env=False, timeout=120) as http:
        answer = http.post(f"/api/task/{KITCHEN}/check", json=good).json()
    assert answer.get("ok") is True and "✔ unified planning agrees" in answer["html"]["checks"], answer


def test_a_check_has_one_time_limit_in_all(tmp_path):
    """`--time-limit` bounds each check as a whole, as `task check`: a text slow in every step
    fails its time-limit line soon after the 0.3 s given."""
    root = copy_examples(tmp_path / "tasks", ["bathroom_bleach_bucket"])
    slow = tmp_path / "slow"
    shutil.copytree(root / "bathroom_bleach_bucket", slow)
    write_hard_task(slow, idle_actions=3000)
    with running_workbench(root, "--time-limit", "0.3") as url, httpx.Client(base_url=url, trust_env=False, timeout=120) as http:
        answer = http.post("/api/task/bathroom_bleach_bucket/check", json=texts(slow)).json()
    assert answer["ok"] is False and "the check ran out of its time limit of 0.3s while " in answer["html"]["checks"]


@pytest.mark.timing
def test_unified_planning_reading_ends_within_the_time_limit_on_busy_cpus(tmp_path):
    """With `--cross-check` Unified Planning reads each checked text too, and its reader never looks
    at the clock: a text it takes seconds over (one init fact 5,000 times) is answered within the
    limit plus a second, every CPU busy, naming the step. (A first check warms the check processes:
    starting one, Unified Planning loaded, is not part of a check's time.)"""
    root = copy_examples(tmp_path / "tasks", ["bathroom_bleach_bucket"])
    slow = Path(shutil.copytree(root / "bathroom_bleach_bucket", tmp_path / "slow"))
    repeat_init_fact(slow, 5000)
    with (
        running_workbench(root, "--cross-check", "--time-limit", "2") as url,
        httpx.Client(base_url=url, trust_env=False, timeout=120) as http,
    ):
        assert http.post("/api/task/bathroom_bleach_bucket/check", json=texts(root / "bathroom_bleach_bucket")).json()["ok"]
        with busy_cpus():
            promise = Promise(2)
            started = time.monotonic()
            answer = http.post("/api/task/bathroom_bleach_bucket/check", json=texts(slow)).json()
            promise.assert_kept(time.monotonic() - started)
    assert answer["ok"] is False
    assert "the check ran out of its time limit of 2s while reading the task with Unified Planning" in answer["html"]["checks"]


def test_the_list_answers_while_two_long_checks_run(tmp_path):
    """Checks run in check processes of their own: page loads never wait behind them (each answers
    while both checks are still running); Stop ends them."""
    root = copy_examples(tmp_path / "tasks", ["bathroom_bleach_bucket"])
    slow = ["slow_a", "slow_b"]
    for name in slow:
        write_hard_task(root / name)  # its planners run until the limit
    with running_workbench(root, "--time-limit", "300") as url, httpx.Client(base_url=url, trust_env=False, timeout=300) as http:
        assert http.get("/").status_code == 200  # the rows, listed once and kept until the files change
        with ThreadPoolExecutor(2) as pool:
            checks = [pool.submit(http.post, f"/api/task/{name}/check", json=texts(root / name)) for name in slow]
            eventually(lambda: all(_checking(http, name) for name in slow), "the two checks running", every=0.2)
            for _ in range(3):
                assert http.get("/").status_code == 200 and http.get("/static/workbench.css").status_code == 200
                assert all(_checking(http, name) for name in slow) and not any(check.done() for check in checks)
            assert [http.post(f"/api/task/{name}/stop", json={}).json() for name in slow] == [{"stopped": True}] * 2
            assert [check.result().json() for check in checks] == [{"stopped": True}] * 2


def _checking(http: httpx.Client, key: str) -> bool:
    progress = http.get(f"/api/task/{key}/progress").json()["check"]
    return progress is not None and progress["stage"].startswith("checking: ")


def test_the_page_and_task_check_json_give_the_same_diagnostics(client, served, tmp_path):
    """Every problem at once, with its line and columns: one list for the page and `task check --json`."""
    folder = Path(shutil.copytree(served[1] / KITCHEN, tmp_path / KITCHEN))
    domain = folder / "safety_domain.pddl"
    text = domain.read_text().replace("(not (robot_at ?from))))", "(not (robot_at ?from)) (increase (danger) 1)))", 1)
    domain.write_text(text.replace("(increase (danger) 1))\n", "(assign (danger) 1))\n", 1))
    answer = client.post(f"/api/task/{KITCHEN}/check", json=texts(folder)).json()
    checked = subprocess.run([*SAFEFORGE, "task", "check", str(folder), "--json"], capture_output=True, text=True, timeout=120)
    assert len(answer["diagnostics"]) == 2 and answer["diagnostics"] == json.loads(checked.stdout)["diagnostics"]
    assert answer["html"]["diagnostics"].count('class="diagnostic severity-error"') == 2


def test_a_text_over_the_limit_gets_the_servers_message_not_itself_back(client, served):
    body = {**texts(served[1] / KITCHEN), "safety_domain": "x" * (2 << 20)}
    refused = client.post(f"/api/task/{KITCHEN}/check", json=body)
    assert refused.status_code == 422 and len(refused.content) < 1000
    assert refused.json() == {
        "error": "safety_domain: the text is more than 1,048,576 bytes; the limit is 1,048,576 (SAFEFORGE_MAX_PDDL_BYTES)"
    }
