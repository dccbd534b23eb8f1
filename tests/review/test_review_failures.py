"""Server down, a refused token, a deleted project or task: a clear error, nothing in the run changed."""

from __future__ import annotations

from dataclasses import replace

import pytest
from review_helpers import Submission, free_port, ls_task_id, snapshot, submit

from safeforge.review import ReviewError, pull_run, push_run
from safeforge.review._mapping import ReviewMapping

KITCHEN, BLEACH = "kitchen_mopped_floor_hot_soup", "bathroom_bleach_bucket"


@pytest.fixture
def pushed(make_run, config, annotator):
    """A run with two tasks in review, one of them annotated (so a pull would change things)."""
    store = make_run([KITCHEN, BLEACH])
    push_run(store, config)
    submit(annotator("ann@review.test"), ls_task_id(store, KITCHEN), Submission("accept"))
    return store


def test_server_down(pushed, config):
    down = replace(config, url=f"http://127.0.0.1:{free_port()}", timeout=5)
    before = snapshot(pushed)
    for step in (push_run, pull_run):
        with pytest.raises(
            ReviewError,
            match=r"cannot reach Label Studio at http://127\.0\.0\.1:\d+ .*"
            r"`safeforge review server start`",
        ):
            step(pushed, down)
    assert snapshot(pushed) == before


def test_wrong_token(pushed, config):
    before = snapshot(pushed)
    for step in (push_run, pull_run):
        with pytest.raises(ReviewError, match=r"refused the API token \(401.*Set LABEL_STUDIO_API_KEY"):
            step(pushed, replace(config, api_key="not-the-token"))
    assert snapshot(pushed) == before


def test_deleted_project_stops_pull_and_push_until_reimported(pushed, config, admin):
    project_id = ReviewMapping.load(pushed).project_id
    admin.projects.delete(project_id)
    before = snapshot(pushed)
    with pytest.raises(
        ReviewError,
        match=rf"project {project_id} .* no longer exists .*nothing was changed.*"
        rf"`safeforge review push {pushed.name} --reimport-missing`",
    ):
        pull_run(pushed, config)
    with pytest.raises(ReviewError, match=rf"project {project_id} .* no longer exists .*--reimport-missing"):
        push_run(pushed, config)
    assert snapshot(pushed) == before

    again = push_run(pushed, config, reimport_missing=True)
    assert again.created_project and again.project_id != project_id and sorted(again.imported) == [BLEACH, KITCHEN]
    assert ReviewMapping.load(pushed).project_id == again.project_id
    assert all(r.state == "in_review" for r in pushed.ledger.records())
    result = pull_run(pushed, config)  # the annotation was lost with the project: all pending
    assert sorted(result.pending) == [BLEACH, KITCHEN]


def test_deleted_task_stops_pull_until_reimported(pushed, config, admin):
    admin.tasks.delete(ls_task_id(pushed, BLEACH))
    before = snapshot(pushed)
    with pytest.raises(
        ReviewError,
        match=rf"1 task\(s\) in review are missing .*: {BLEACH}; nothing was changed"
        rf".*--reimport-missing",
    ):
        pull_run(pushed, config)
    with pytest.raises(ReviewError, match=rf"missing from Label Studio .*{BLEACH}.*--reimport-missing"):
        push_run(pushed, config)
    assert snapshot(pushed) == before

    again = push_run(pushed, config, reimport_missing=True)
    assert again.imported == [BLEACH] and not again.created_project
    result = pull_run(pushed, config)
    assert (result.accepted, result.pending) == ([KITCHEN], [BLEACH])


def test_pull_before_push_says_to_push(make_run, config):
    store = make_run([KITCHEN])
    with pytest.raises(ReviewError, match=rf"run `safeforge review push {store.name}` first"):
        pull_run(store, config)
