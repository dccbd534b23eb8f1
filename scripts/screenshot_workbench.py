#!/usr/bin/env python
"""Take docs/workbench-list.png, -trace.png, -edit.png and -diff.png: the workbench over a copy of
the example tasks, at 1366x768 (the size tests/workbench/test_workbench_browser.py
checks), in headless Chromium (install it with `apt-get install chromium`).

    .venv/bin/python scripts/screenshot_workbench.py [--out docs]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests"), str(REPO / "tests" / "workbench")]

from workbench_helpers import (  # noqa: E402
    checks_shown,
    copy_examples,
    replace_in_editor,
    running_workbench,
    scroll_to,
    show,
    wait_for_check,
)

from tests.doubles.review_browser import chromium_page, find_chromium  # noqa: E402

TASK = "kitchen_mopped_floor_hot_soup"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs")
    parser.add_argument("--chromium", default=find_chromium())
    args = parser.parse_args()
    if args.chromium is None:
        parser.error("chromium not found: apt-get install chromium, or pass --chromium PATH")
    with tempfile.TemporaryDirectory(prefix="safeforge-screenshot-") as tmp:
        root = copy_examples(Path(tmp) / "tasks")
        with running_workbench(root) as url, chromium_page(args.chromium, Path(tmp) / "chromium", 1366, 768) as page:
            show(page, url + "/")
            (args.out / "workbench-list.png").write_bytes(page.screenshot())

            show(page, f"{url}/task/{TASK}")
            page.evaluate("document.querySelector('.plan-unsafe tr[data-step=\"3\"] details.state').open = true")
            scroll_to(page, "[data-section=plans]")
            (args.out / "workbench-trace.png").write_bytes(page.screenshot())

            before = checks_shown(page)
            replace_in_editor(page, "safety_domain.pddl", "(increase (danger) 1)", "(assign (danger) 1)")
            replace_in_editor(page, "safety_domain.pddl", "(not (floor_wet ?r))))", "(not (floor_wet ?r)) (decrease (danger) 1)))")
            wait_for_check(page, before)
            scroll_to(page, "#pddl")
            page.evaluate("SafeforgeEditor.viewOf(document.querySelector('.editor')).scrollDOM.scrollTo(0, 18 * 17)")
            time.sleep(0.3)
            (args.out / "workbench-edit.png").write_bytes(page.screenshot())

            replace_in_editor(page, "safety_domain.pddl", "(not (floor_wet ?r)) (decrease (danger) 1)))", "(not (floor_wet ?r))))")
            page.evaluate("document.getElementById('save').click()")
            page.wait_for("document.getElementById('diff-dialog').open", "the diff of the change")
            time.sleep(0.3)
            (args.out / "workbench-diff.png").write_bytes(page.screenshot())
    print(f"wrote workbench-list.png, -trace.png, -edit.png and -diff.png in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
