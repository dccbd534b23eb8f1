#!/usr/bin/env python
"""Take docs/workbench-list.png, docs/workbench-trace.png and docs/workbench-edit.png: the workbench
over a copy of the example tasks, at 1366x768 (the size tests/workbench/test_workbench_browser.py
checks), in headless Chromium (install it with `apt-get install chromium`).

    .venv/bin/python scripts/screenshot_workbench.py [--out docs]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
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
            scroll_to(page, ".plan-unsafe")
            (args.out / "workbench-trace.png").write_bytes(page.screenshot())

            before = checks_shown(page)
            replace_in_editor(page, "safety_domain.pddl", "(increase (danger) 1)", "(assign (danger) 1)")
            wait_for_check(page, before)
            page.evaluate("document.querySelectorAll('.editor textarea').forEach(area => { area.scrollLeft = 0; })")
            scroll_to(page, "#pddl")
            (args.out / "workbench-edit.png").write_bytes(page.screenshot())
    print(f"wrote workbench-list.png, workbench-trace.png and workbench-edit.png in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
