"""Damaged task folders and damaged text in the editors: the workbench lists and shows them with
what is wrong, and answers every check with diagnostics, never with an error page. The application
runs in process here (Starlette's test client), the folders are real."""

from __future__ import annotations

import os
import shutil

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient
from tests_paths import EXAMPLES

from safeforge.workbench import Workspace, create_app

KITCHEN = EXAMPLES / "kitchen_mopped_floor_hot_soup"
DOMAIN, PROBLEM = ((KITCHEN / name).read_text() for name in ("safety_domain.pddl", "safety_problem.pddl"))
DAMAGE = {
    "bad_json": ("metadata.json", b'{"task_id": "x",'),
    "bad_schema": ("metadata.json", b'{"danger_formalization": {"danger_group": "cosmic"}}'),
    "not_utf8": ("safety_domain.pddl", b"(define (domain \xff\xfe"),
    "unbalanced": ("safety_problem.pddl", PROBLEM.replace("(:goal", "(:goal (").encode()),
    "huge": (
        "safety_problem.pddl",
        PROBLEM.replace("soup_pot - pot\n", f"soup_pot {' '.join(f'p{i}' for i in range(40000))} - pot\n").encode(),
    ),
}

NOISE = ["(", ")", "?x", " - ", "(and", "(not", ":action", "(danger)", "\x00", "é"]


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    root = tmp_path_factory.mktemp("damaged")
    for name, (file, data) in DAMAGE.items():
        shutil.copytree(KITCHEN, root / name)
        (root / name / file).write_bytes(data)
    shutil.copytree(KITCHEN, root / "missing_problem")
    (root / "missing_problem" / "safety_problem.pddl").unlink()
    (root / "fifo").mkdir()
    (root / "fifo" / "safety_domain.pddl").write_text(DOMAIN)
    (root / "fifo" / "metadata.json").write_text("{}")
    os.mkfifo(root / "fifo" / "safety_problem.pddl")
    workspace = Workspace(root)
    with TestClient(create_app(workspace, time_limit=10), base_url="http://127.0.0.1") as http:
        yield http
    workspace.close()


def test_damaged_folders_are_listed_with_what_is_wrong(client):
    page = client.get("/")
    assert page.status_code == 200
    for name in [*DAMAGE, "missing_problem", "fifo"]:
        row = page.text.split(f'data-key="{name}"')[1].split("</tr>")[0]
        assert "status-unreadable" in row or "status-fails" in row, name
    assert "not a regular file" in page.text and "file is missing" in page.text and "invalid JSON" in page.text
    assert "grounds to" in page.text.split('data-key="huge"')[1].split("</tr>")[0]  # too large to read


@pytest.mark.parametrize("name", [*DAMAGE, "missing_problem", "fifo"])
def test_a_damaged_task_page_shows_the_problem_and_cannot_be_saved(client, name):
    page = client.get(f"/task/{name}")
    assert page.status_code == 200 and 'class="diagnostic severity-error"' in page.text
    answer = client.post(f"/api/task/{name}/check", json={"safety_domain": DOMAIN, "safety_problem": PROBLEM})
    assert answer.status_code == 200
    if name in ("bad_json", "bad_schema", "missing_problem", "fifo"):
        save = client.post(f"/api/task/{name}/save", json={"safety_domain": DOMAIN, "safety_problem": PROBLEM, "base_sha256": {}})
        assert save.status_code == 409 and "cannot be edited here" in save.json()["error"]


@st.composite
def damaged(draw, original: str) -> str:
    text = original
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(text)))
        kind = draw(st.sampled_from(["cut", "insert"]))
        if kind == "cut":
            text = text[:at] + text[at + draw(st.integers(1, 60)) :]
        else:
            text = text[:at] + draw(st.sampled_from(NOISE)) + text[at:]
    return text


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(domain=damaged(DOMAIN), problem=damaged(PROBLEM), plan=st.text(max_size=80))
def test_damaged_text_gets_diagnostics_and_a_score(client, domain, problem, plan):
    body = {"safety_domain": domain, "safety_problem": problem}
    answer = client.post("/api/task/bad_json/check", json=body)
    assert answer.status_code == 200
    result = answer.json()
    assert result["ok"] in (True, False)
    assert result["ok"] or result["diagnostics"]
    for diagnostic in result["diagnostics"]:
        if diagnostic["line"] is not None:
            text = domain if diagnostic["file"] == "safety_domain.pddl" else problem
            assert 1 <= diagnostic["line"] <= text.count("\n") + 1
    scored = client.post("/api/task/bad_json/plan", json={**body, "plan": plan})
    assert scored.status_code == 200 and ("error" in scored.json() or scored.json()["score"] in (0, 1, 2))
