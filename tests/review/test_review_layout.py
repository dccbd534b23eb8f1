"""The review interface at 1366x768, a common laptop screen, in headless Chromium: the text of the
task, danger and formalization cards keeps a readable width in the annotators' queue (with Label
Studio's side panels open) and in each column of Compare All with three annotators, all three on
screen, each marking the correction fields its annotator changed; docs/review-interface.png is a
picture of this size (scripts/screenshot_review.py takes it)."""

from __future__ import annotations

from pathlib import Path

import pytest
from review_helpers import ADMIN, PASSWORD, Submission, ls_task_id, submit

from safeforge.review import pull_run, push_run
from tests.doubles.review_browser import (
    COLUMNS,
    CORRECTION_MARKS,
    TEXT_WIDTHS,
    chromium_page,
    compare_all,
    login_cookies,
    open_corrections,
    png_size,
    require_chromium,
    screenshot_task,
    show_task,
)

WIDTH, HEIGHT = 1366, 768
QUEUE_NOTES = "[...document.querySelectorAll('.sf-queue-note')].filter(n => n.offsetParent !== null).map(n => n.textContent)"
MIN_TEXT_WIDTH = 300  # CSS px: about 40 characters of the cards' 14 px text
DOCS_PICTURE = Path(__file__).resolve().parents[2] / "docs" / "review-interface.png"
TASK = "kitchen_mopped_floor_hot_soup"


@pytest.fixture
def chromium() -> str:
    return require_chromium()


def test_readable_at_1366x768(chromium, labelstudio, config, admin, annotator, make_run, tmp_path):
    store = make_run([TASK])
    project = push_run(store, config, annotators_per_task=3, adjudicators=["lead@review.test"]).project_id
    task = ls_task_id(store, TASK)
    cookies = login_cookies(labelstudio.url, ADMIN, PASSWORD)
    with chromium_page(chromium, tmp_path / "chromium", WIDTH, HEIGHT) as page:
        show_task(page, f"{labelstudio.url}/projects/{project}/data?labeling=1", cookies)
        assert page.evaluate(TEXT_WIDTHS)[0] >= MIN_TEXT_WIDTH, "the queue squeezes the cards' text"
        assert page.evaluate(QUEUE_NOTES) == []  # the adjudication note shows in Compare All only
        png = screenshot_task(page)
        (tmp_path / "review-interface.png").write_bytes(png)
        assert png_size(png) == (WIDTH, HEIGHT)

        first = submit(admin, task, Submission("accept"))
        second = submit(annotator("second-opinion@review.test"), task, Submission("reject", reasons=("other",), note="the soup is cold"))
        third = submit(
            annotator("third-opinion@review.test"),
            task,
            Submission("accept", fixes={"setting": "A cafe kitchen.", "robot_task": "Carry it."}),
        )
        assert pull_run(store, config).queue == {TASK: "votes split: 2 accept, 1 reject"}  # and marks it in Label Studio
        compare_all(page, f"{labelstudio.url}/projects/{project}/data?task={task}", cookies, annotations=3)
        widths = page.evaluate(TEXT_WIDTHS)
        assert len(widths) == 3 and min(widths) >= MIN_TEXT_WIDTH, f"Compare All squeezes the cards' text: {widths}"
        assert all(right <= WIDTH for right in page.evaluate(COLUMNS)), f"a column is off screen: {page.evaluate(COLUMNS)}"
        (tmp_path / "compare-all.png").write_bytes(page.screenshot())
        assert page.evaluate(QUEUE_NOTES) == ["Needs adjudication: votes split: 2 accept, 1 reject"] * 3
        open_corrections(page)
        marks = page.evaluate(CORRECTION_MARKS)
        assert marks[str(third)] == {"header": "✎ changed: setting, robot task", "marked": ["setting", "robot_task"]}
        assert marks[str(first)] == marks[str(second)] == {"header": "", "marked": []}

    assert png_size(DOCS_PICTURE.read_bytes()) == (WIDTH, HEIGHT), "take the picture again: scripts/screenshot_review.py"


IN_TASK_LIST = (  # the Data Manager's task table (not the task shown beside it) names the task
    "[...document.querySelectorAll('[class*=table] [class*=cell]')].some(c => !c.closest('.sf-root') && c.textContent.includes({name}))"
)
COLUMN_LABELS = "[...document.querySelectorAll('.lsf-wrapper_viewAll .sf-root')].map(root => getComputedStyle(root, '::before').content)"


def test_compare_all_names_each_column_marks_a_refused_adjudication_and_views_name_tasks(
    chromium, labelstudio, config, admin, annotator, make_run, tmp_path
):
    store = make_run([TASK])
    project = push_run(store, config, annotators_per_task=2, adjudicators=["lead@review.test", "alice@review.test"]).project_id
    task = ls_task_id(store, TASK)
    alice, bob = annotator("alice@review.test"), annotator("bob@review.test")
    voted = submit(alice, task, Submission("accept"))
    rejected = submit(bob, task, Submission("reject", reasons=("other",)))
    refused = submit(alice, task, Submission("accept", adjudicating=True))  # alice voted: her adjudication is refused
    assert pull_run(store, config).queue == {TASK: "votes split: 1 accept, 1 reject"}
    cookies = login_cookies(labelstudio.url, ADMIN, PASSWORD)
    with chromium_page(chromium, tmp_path / "chromium", WIDTH, HEIGHT) as page:
        compare_all(page, f"{labelstudio.url}/projects/{project}/data?task={task}", cookies, annotations=3)
        labels = sorted(label.strip('"') for label in page.evaluate(COLUMN_LABELS))
        assert labels == sorted(
            [
                f"alice@review.test · annotation {voted} · accept",
                f"bob@review.test · annotation {rejected} · reject",
                f"alice@review.test · annotation {refused} · adjudication REFUSED (its author voted on this task): accept",
            ]
        ), labels
        for tab in ("Default", "Adjudication queue"):  # the task's name in each view's task table
            view, data = next((v.id, v.data or {}) for v in admin.views.list(project=project) if (v.data or {}).get("title") == tab)
            hidden = data["hiddenColumns"]["explore"]  # what would show the others' votes is hidden; the task's name is not
            assert {"tasks:annotators", "tasks:annotations_results", "tasks:total_annotations"} <= set(hidden)
            assert "tasks:data.task_id" not in hidden and "tasks:data.task_id" not in data["hiddenColumns"]["labeling"]
            page.open(f"{labelstudio.url}/projects/{project}/data?tab={view}", cookies)
            page.wait_for(IN_TASK_LIST.format(name=repr(TASK)), f"{TASK} named in view {tab!r}", timeout=60)


def test_voting_is_blind_in_an_annotators_label_stream_and_task_table(chromium, labelstudio, config, admin, annotator, make_run, tmp_path):
    """An annotator who has not voted yet sees no other vote where they vote (the label stream) nor in
    the project's task table; what community Label Studio still shows them is in docs/review.md."""
    store = make_run([TASK])
    project = push_run(store, config, annotators_per_task=3).project_id
    task = ls_task_id(store, TASK)
    first = submit(annotator("first@review.test"), task, Submission("reject", reasons=("other",), note="the soup is cold"))
    pull_run(store, config)
    assert admin.projects.get(project).show_collab_predictions is False
    annotator("blind@review.test")
    cookies = login_cookies(labelstudio.url, "blind@review.test", "annotator-password-1")
    with chromium_page(chromium, tmp_path / "chromium", WIDTH, HEIGHT) as page:
        show_task(page, f"{labelstudio.url}/projects/{project}/data?labeling=1", cookies)  # Label All Tasks
        shown = page.evaluate("document.body.innerText")
        ids = page.evaluate("[...document.querySelectorAll('[data-annotation-id]')].map(e => e.dataset.annotationId)")
        assert TASK in shown and "the soup is cold" not in shown and str(first) not in ids and "first@review.test" not in shown
        page.open(f"{labelstudio.url}/projects/{project}/data", cookies)
        page.wait_for(IN_TASK_LIST.format(name=repr(TASK)), "the task table")
        table = page.evaluate("document.body.innerText")
        assert "Annotated by" not in table and "the soup is cold" not in table and "reject" not in table.lower()
