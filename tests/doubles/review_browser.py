"""The review interface in headless Chromium, driven over its DevTools protocol (with `websockets`):
for the screenshot in docs/ (scripts/screenshot_review.py) and the layout test
(tests/review/test_review_layout.py); the workbench's browser tests use its page too. Install the
browser with `apt-get install chromium` (scripts/setup.sh does)."""

from __future__ import annotations

import base64
import json
import shutil
import struct
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from websockets.sync.client import connect

CHROMIUM_FLAGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--remote-debugging-port=0",
]
# What the DevTools protocol answers when the page navigated while an expression ran.
NAVIGATION_ERRORS = ("Inspected target navigated or closed", "Execution context was destroyed")


class NavigatedAway(RuntimeError):
    """The page navigated away while a command ran in it."""


# The widths of the narrowest text cell of the task, danger and formalization cards, one for each
# task shown (Compare All shows one for each annotation).
TEXT_WIDTHS = """[...document.querySelectorAll('.sf-page')].map(page => Math.min(
  ...[...page.querySelectorAll('.sf-task .sf-v, .sf-table td')].map(cell => cell.getBoundingClientRect().width)))"""
# The right edge of each task shown (Compare All shows one for each annotation), in CSS px.
COLUMNS = "[...document.querySelectorAll('.sf-page')].map(page => Math.round(page.getBoundingClientRect().right))"
# In Compare All, for each annotation's column (by annotation id): the text its corrections panel's
# header adds, and the correction fields marked as changed (open the panels first).
CORRECTION_MARKS = """Object.fromEntries([...document.querySelectorAll('[data-annotation-id]')]
  .filter(tab => tab.parentElement.parentElement.querySelector(':scope > .sf-root'))
  .map(tab => {
    const root = tab.parentElement.parentElement.querySelector(':scope > .sf-root');
    const header = root.querySelector('.sf-corrections .ant-collapse-header');
    const content = header ? getComputedStyle(header, '::after').content : 'none';
    const marked = [...root.querySelectorAll('.sf-fix')].filter(f => parseFloat(getComputedStyle(f).borderLeftWidth) >= 3)
      .map(f => [...f.classList].find(c => c.startsWith('sf-fix-')).slice('sf-fix-'.length));
    return [tab.dataset.annotationId, {header: content === 'none' ? '' : JSON.parse(content), marked}];
  }))"""
# Collapse Label Studio's own side panels (regions, info) to give the task the width, and open the
# corrections panel so that the prefilled formalization fields show.
PREPARE_SCREENSHOT = """(() => {
  document.querySelectorAll('.lsf-tabs-panel__toggle_alignment_right').forEach(t => t.click());
  const corrections = [...document.querySelectorAll('.ant-collapse-header')]
      .find(h => h.textContent.includes('Correct the formalization'));
  if (corrections) corrections.click();
  return true;
})()"""


def find_chromium() -> str | None:
    """The Chromium executable on PATH, if any."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


def require_chromium() -> str:
    """The Chromium executable for a test: skips where it cannot be installed, fails where it could be."""
    path = find_chromium()
    if path is None:
        if shutil.which("apt-get") is None:
            pytest.skip("chromium is not installed, and this machine has no apt-get to install it with")
        pytest.fail("chromium is not installed (CI runs scripts/setup.sh, which installs it)")
    return path


def png_size(png: bytes) -> tuple[int, int]:
    """Width and height of a PNG image, from its header."""
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and png[12:16] == b"IHDR", "not a PNG image"
    return struct.unpack(">II", png[16:24])


def login_cookies(url: str, username: str, password: str) -> dict[str, str]:
    """Log in through Label Studio's login form, as a browser would; returns the session cookies."""
    with httpx.Client(base_url=url, follow_redirects=False, trust_env=False) as http:
        http.get("/user/login/")
        response = http.post(
            "/user/login/",
            data={"email": username, "password": password, "csrfmiddlewaretoken": http.cookies["csrftoken"]},
            headers={"Referer": f"{url}/user/login/"},
        )
        if response.status_code != 302:
            raise RuntimeError(f"logging in to {url} failed (HTTP {response.status_code})")
        return dict(http.cookies)


class Page:
    """One browser page, over a DevTools protocol connection."""

    def __init__(self, socket):
        self.socket, self.next_id = socket, 0

    def call(self, method: str, **params) -> dict:
        """The browser's answer to `method`; TimeoutError after 120 s without a message (a page whose
        server stopped answering fails its test rather than hanging it)."""
        self.next_id += 1
        self.socket.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            try:
                message = json.loads(self.socket.recv(timeout=120))
            except TimeoutError:
                raise TimeoutError(f"the browser did not answer {method} in 120 s") from None
            if message.get("id") == self.next_id:
                if "error" in message:
                    navigated = str(message["error"].get("message", "")).startswith(NAVIGATION_ERRORS)
                    raise (NavigatedAway if navigated else RuntimeError)(f"{method}: {message['error']}")
                return message.get("result", {})

    def evaluate(self, expression: str):
        """The value of a JavaScript expression in the page (promises awaited)."""
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"JavaScript failed: {result['exceptionDetails']}")
        return result.get("result", {}).get("value")

    def wait_for(self, expression: str, what: str, timeout: float = 60) -> None:
        """Poll `expression` until it is true; an evaluation cut short by the page navigating away
        (the moment a filter or a form reloads it) counts as not yet true."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                if self.evaluate(expression):
                    return
            except NavigatedAway:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"timed out waiting for {what}")
            time.sleep(0.25)

    def open(self, url: str, cookies: dict[str, str]) -> None:
        """Navigate to `url` with the session `cookies` set for its site."""
        for name, value in cookies.items():
            self.call("Network.setCookie", name=name, value=value, url=url)
        self.call("Page.navigate", url=url)

    def screenshot(self) -> bytes:
        return base64.b64decode(self.call("Page.captureScreenshot", format="png")["data"])


@contextmanager
def chromium_page(chromium: str, profile: Path, width: int, height: int) -> Iterator[Page]:
    """A headless Chromium (profile in `profile`) showing one blank page of width x height CSS px."""
    browser = subprocess.Popen(
        [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}", "about:blank"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while not port_file.exists() or not port_file.read_text().strip():
            if time.monotonic() > deadline or browser.poll() is not None:
                raise RuntimeError(f"{chromium} did not start")
            time.sleep(0.2)
        port = int(port_file.read_text().split()[0])
        pages = httpx.get(f"http://127.0.0.1:{port}/json/list", trust_env=False).json()
        target = next(p for p in pages if p.get("type") == "page")
        with connect(target["webSocketDebuggerUrl"], max_size=None) as socket:
            page = Page(socket)
            page.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)
            yield page
    finally:
        browser.terminate()
        try:
            browser.wait(timeout=10)
        except subprocess.TimeoutExpired:
            browser.kill()
            browser.wait()


def tasks_shown(count: int) -> str:
    """JavaScript: at least `count` tasks have rendered (their plans tables have steps)."""
    return f"[...document.querySelectorAll('.sf-plans')].filter(p => p.querySelector('.sf-step')).length >= {count}"


def show_task(page: Page, url: str, cookies: dict[str, str]) -> None:
    """Open a page of Label Studio that shows one task (the labeling queue, say) and let it settle."""
    page.open(url, cookies)
    page.wait_for(tasks_shown(1), "the task to render", timeout=90)
    time.sleep(2)  # let the prediction and fonts settle


def screenshot_task(page: Page) -> bytes:
    """The picture of the task shown, as in docs/: Label Studio's side panels collapsed, the
    corrections panel open."""
    page.evaluate(PREPARE_SCREENSHOT)
    time.sleep(1)
    return page.screenshot()


def open_corrections(page: Page) -> None:
    """Open every "Correct the formalization" panel shown, and let them render."""
    page.evaluate(
        "[...document.querySelectorAll('.sf-corrections .ant-collapse-header')]"
        ".filter(h => h.getAttribute('aria-expanded') !== 'true').forEach(h => h.click())"
    )
    page.wait_for("document.querySelectorAll('.sf-fix').length > 0", "the correction panels to open")
    time.sleep(0.5)


def compare_all(page: Page, url: str, cookies: dict[str, str], annotations: int) -> None:
    """Open a task in the data manager (`url`: .../data?task=ID) and switch to Compare All, which
    shows its `annotations` side by side. The button is pressed until it stays pressed: Label Studio
    may render it again while it loads the task."""
    page.open(url, cookies)
    page.wait_for(
        f"""(() => {{
          if ({tasks_shown(annotations)}) return true;
          const button = document.querySelector('[data-testid=compare-all-toggle]');
          if (button && button.getAttribute('aria-pressed') !== 'true') button.click();
          return false;
        }})()""",
        f"Compare All to show {annotations} annotations",
    )
