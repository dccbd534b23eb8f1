"""Annotators reach the workbench from Label Studio: each review task carries a link to its page in
the workbench started on the run, and the link opens that task's page."""

from __future__ import annotations

import re

import httpx
from workbench_helpers import running_workbench

from safeforge.review import LABELING_CONFIG, build_task
from tests.doubles.review_demo import demo_run

TASK = "teen_desk_diary_trust"


def test_a_review_task_links_to_its_page_in_the_workbench(tmp_path, monkeypatch):
    store = demo_run(tmp_path / "run", [TASK])
    assert 'value="$workbench_html"' in LABELING_CONFIG.read_text()
    with running_workbench(store.root) as url:
        monkeypatch.setenv("SAFEFORGE_WORKBENCH_URL", url + "/")
        data = build_task(store.task_dir(TASK), "record-1", "normbank")["data"]
        (link,) = re.findall(r'href="([^"]+)"', data["workbench_html"])
        assert link == f"{url}/task/{TASK}"
        page = httpx.get(link, trust_env=False, timeout=60)
    assert page.status_code == 200 and "<h1>teen_desk_diary_trust</h1>" in page.text
    assert "state traces" in data["workbench_html"]


def test_the_link_defaults_to_the_workbench_port(tmp_path, monkeypatch):
    store = demo_run(tmp_path / "run", [TASK])
    monkeypatch.delenv("SAFEFORGE_WORKBENCH_URL", raising=False)
    monkeypatch.setenv("SAFEFORGE_WORKBENCH_PORT", "4555")
    data = build_task(store.task_dir(TASK), "record-1", "normbank")["data"]
    assert f'href="http://127.0.0.1:4555/task/{TASK}"' in data["workbench_html"]
