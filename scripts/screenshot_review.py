#!/usr/bin/env python
"""Take docs/review-interface.png: the Label Studio labeling interface showing a real example task,
at 1366x768 (the size tests/review/test_review_layout.py checks the layout at).

Starts a throw-away Label Studio server (from .venv-labelstudio/; run scripts/setup_labelstudio.sh
first), pushes one example task with `safeforge.review.push_run`, logs in, opens the task in headless
Chromium (tests/doubles/review_browser.py; install it with `apt-get install chromium`) and saves a
screenshot.

    .venv/bin/python scripts/screenshot_review.py [--task NAME] [--out docs/review-interface.png]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from safeforge.review import ReviewConfig, push_run, start_server, stop_server  # noqa: E402
from tests.doubles.review_browser import chromium_page, find_chromium, login_cookies, screenshot_task, show_task  # noqa: E402
from tests.doubles.review_demo import demo_run  # noqa: E402
from tests.review.review_helpers import free_port  # noqa: E402

USERNAME, PASSWORD, TOKEN = "reviewer@safeforge.local", "screenshot-password", "screenshot-token-0123"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="kitchen_mopped_floor_hot_soup", help="example task to show")
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "review-interface.png")
    parser.add_argument("--chromium", default=find_chromium())
    parser.add_argument("--width", type=int, default=1366)
    parser.add_argument("--height", type=int, default=768)
    args = parser.parse_args()
    if args.chromium is None:
        parser.error("chromium not found: apt-get install chromium, or pass --chromium PATH")
    with tempfile.TemporaryDirectory(prefix="safeforge-screenshot-") as tmp:
        handle = start_server(Path(tmp) / "labelstudio", free_port(), USERNAME, PASSWORD, TOKEN)
        try:
            store = demo_run(Path(tmp) / "demo", [args.task])
            config = ReviewConfig(url=handle.url, api_key=TOKEN, username=USERNAME, password=PASSWORD)
            project = push_run(store, config).project_id
            with chromium_page(args.chromium, Path(tmp) / "chromium", args.width, args.height) as page:
                # the annotators' queue
                show_task(page, f"{handle.url}/projects/{project}/data?labeling=1", login_cookies(handle.url, USERNAME, PASSWORD))
                png = screenshot_task(page)
        finally:
            stop_server(handle)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(png)
    print(f"wrote {args.out} ({len(png) / 1e6:.2f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
