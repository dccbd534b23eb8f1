"""The workbench as a user starts it (`safeforge workbench FOLDER`, a real server on 127.0.0.1), and
task folders that try to inject markup into its pages."""

from __future__ import annotations

import json
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

import httpx
from tests_paths import EXAMPLES

from tests.doubles.review_browser import Page

SAFEFORGE = [sys.executable, "-m", "safeforge.cli"]
URL_LINE = re.compile(r"(http://127\.0\.0\.1:\d+)/")
# markup in a task's text: shown as text, it must never become an element or run
INJECTED = '<script>window.__pwned = 1</script><img src="x" onerror="window.__pwned = 2">'


@contextmanager
def running_workbench(folder: Path, *options: str, env: dict | None = None) -> Iterator[str]:
    """`safeforge workbench FOLDER --port 0`: yields its base URL once it answers; stopped after. Its
    log goes to a file (a pipe nobody reads would stop the server once it holds 64 KB)."""
    log = tempfile.TemporaryFile(mode="w+")
    process = subprocess.Popen(
        [*SAFEFORGE, "workbench", str(folder), "--port", "0", "--time-limit", "20", *options],
        stdout=subprocess.PIPE,
        stderr=log,
        text=True,
        env=env,
    )
    try:
        url = _announced_url(process, log)
        deadline = time.monotonic() + 60
        while httpx.get(url + "/", trust_env=False, timeout=120).status_code != 200:  # the first list reads every task
            if time.monotonic() > deadline:
                raise TimeoutError("the workbench does not answer")
            time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def _announced_url(process: subprocess.Popen, log: IO[str]) -> str:
    assert process.stdout is not None
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        ready, _, _ = select.select([process.stdout], [], [], 1)
        if ready:
            line = process.stdout.readline()
            if found := URL_LINE.search(line):
                return found.group(1)
        if process.poll() is not None:
            log.seek(0)
            raise RuntimeError(f"the workbench exited ({process.returncode}): {log.read()}")
    raise TimeoutError("the workbench did not announce its URL")


def copy_examples(target: Path, names: list[str] | None = None) -> Path:
    """A folder of task folders copied from examples/tasks (all of them by default)."""
    target.mkdir(parents=True, exist_ok=True)
    for example in sorted(EXAMPLES.iterdir()):
        if names is None or example.name in names:
            shutil.copytree(example, target / example.name)
    return target


def hostile_task(parent: Path, name: str = "hostile_task") -> Path:
    """A copy of an example whose PDDL comments, metadata and plan carry markup and script."""
    folder = Path(shutil.copytree(EXAMPLES / "kitchen_mopped_floor_hot_soup", parent / name))
    domain = folder / "safety_domain.pddl"
    text = domain.read_text()
    assert "(:types room pot towel)" in text, "the example's types line moved: the markup would not be planted"
    domain.write_text(text.replace("(:types room pot towel)", f"(:types room pot towel) ; </textarea>{INJECTED}"))
    metadata = json.loads((folder / "metadata.json").read_text())
    metadata["danger_formalization"]["setting"] = f"A kitchen {INJECTED}"
    metadata["danger_formalization"]["robot_task"] = "</td></tr></table>" + INJECTED
    metadata["provenance"]["source"] = f"neiss{INJECTED}"
    (folder / "metadata.json").write_text(json.dumps(metadata))
    return folder


# -- driving the page in headless Chromium (tests/doubles/review_browser.py's Page) ------------------
def show(page: Page, url: str) -> None:
    """Open `url` and wait until its script has set the page up (and, on a task, shown a check)."""
    page.call("Page.navigate", url=url)
    page.wait_for(f"location.href === {json.dumps(url)} && document.readyState === 'complete'", f"{url} to load")
    if "/task/" in url:
        wait_for_check(page, 0)


def checks_shown(page: Page) -> int:
    return int(page.evaluate("Number(document.body.dataset.checksShown || 0)"))


def wait_for_check(page: Page, shown_before: int) -> str:
    """Wait for the next check's answer on the page; returns the check's status line."""
    page.wait_for(f"Number(document.body.dataset.checksShown || 0) > {shown_before}", "the check's answer", timeout=120)
    return page.evaluate("document.getElementById('check-status').textContent")


def type_into(page: Page, selector: str, text: str) -> None:
    """Type `text` where the cursor is in the element (as a keyboard does: input events fire)."""
    page.evaluate(f"document.querySelector({json.dumps(selector)}).focus()")
    page.call("Input.insertText", text=text)


def editor_text(page: Page, file: str) -> str:
    """The text in the editor of `file`."""
    return page.evaluate(f"SafeforgeEditor.text(SafeforgeEditor.viewOf(document.querySelector('.editor[data-file=\"{file}\"]')))")


def select_in_editor(page: Page, file: str, old: str) -> None:
    """Select the first `old` in the editor of `file` and focus it."""
    found = page.evaluate(
        f"""(() => {{
          const view = SafeforgeEditor.viewOf(document.querySelector('.editor[data-file="{file}"]'));
          const start = view.state.doc.toString().indexOf({json.dumps(old)});
          if (start < 0) return false;
          view.focus();
          view.dispatch({{selection: {{anchor: start, head: start + {len(old)}}}, scrollIntoView: true}});
          return true;
        }})()"""
    )
    assert found, f"{old!r} is not in {file}"


def replace_in_editor(page: Page, file: str, old: str, new: str) -> None:
    """Select the first `old` in an editor and type `new` over it (as a keyboard does)."""
    select_in_editor(page, file, old)
    page.call("Input.insertText", text=new)


def scroll_to(page: Page, selector: str) -> None:
    page.evaluate(f"document.querySelector({json.dumps(selector)}).scrollIntoView({{block: 'start'}})")
    time.sleep(0.3)
