"""The review interface at 1366x768, a common laptop screen, in headless Chromium: the text of the
task, danger and formalization cards keeps a readable width in the annotators' queue (with Label
Studio's side panels open) and in each column of Compare All; docs/review-interface.png is a picture
of this size (scripts/screenshot_review.py takes it)."""

from __future__ import annotations

from pathlib import Path

import pytest
from review_helpers import ADMIN, PASSWORD, Submission, ls_task_id, submit

from safeforge.review import push_run
from tests.doubles.review_browser import (
    TEXT_WIDTHS,
    chromium_page,
    compare_all,
    login_cookies,
    png_size,
    require_chromium,
    screenshot_task,
    show_task,
)

WIDTH, HEIGHT = 1366, 768
MIN_TEXT_WIDTH = 300  # CSS px: about 40 characters of the cards' 14 px text
DOCS_PICTURE = Path(__file__).resolve().parents[2] / "docs" / "review-interface.png"
TASK = "kitchen_mopped_floor_hot_soup"


@pytest.fixture
def chromium() -> str:
    return require_chromium()


def test_readable_at_1366x768(chromium, labelstudio, config, admin, annotator, make_run, tmp_path):
    store = make_run([TASK])
    project = push_run(store, config).project_id
    task = ls_task_id(store, TASK)
    cookies = login_cookies(labelstudio.url, ADMIN, PASSWORD)
    with chromium_page(chromium, tmp_path / "chromium", WIDTH, HEIGHT) as page:
        show_task(page, f"{labelstudio.url}/projects/{project}/data?labeling=1", cookies)
        assert page.evaluate(TEXT_WIDTHS)[0] >= MIN_TEXT_WIDTH, "the queue squeezes the cards' text"
        png = screenshot_task(page)
        (tmp_path / "review-interface.png").write_bytes(png)
        assert png_size(png) == (WIDTH, HEIGHT)

        submit(admin, task, Submission("accept"))
        submit(annotator("second-opinion@review.test"), task, Submission("reject", reasons=("other",), note="the soup is cold"))
        compare_all(page, f"{labelstudio.url}/projects/{project}/data?task={task}", cookies, annotations=2)
        widths = page.evaluate(TEXT_WIDTHS)
        assert len(widths) == 2 and min(widths) >= MIN_TEXT_WIDTH, f"Compare All squeezes the cards' text: {widths}"

    assert png_size(DOCS_PICTURE.read_bytes()) == (WIDTH, HEIGHT), "take the picture again: scripts/screenshot_review.py"
