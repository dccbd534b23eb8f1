#!/usr/bin/env python
"""Take docs/review-interface.png: the Label Studio labeling interface showing a real example task.

Starts a throw-away Label Studio server (from .venv-labelstudio/; run scripts/setup_labelstudio.sh
first), pushes one example task with `review.push_run`, logs in, opens the task in headless
Chromium and saves a screenshot. Chromium is driven over its DevTools protocol with `websockets`
(already installed with the project); install the browser with `apt-get install chromium`.

    .venv/bin/python scripts/screenshot_review.py [--task NAME] [--out docs/review-interface.png]
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import websockets

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from review import ReviewConfig, push_run, start_server, stop_server  # noqa: E402
from tests.doubles.review_demo import demo_run  # noqa: E402

USERNAME, PASSWORD, TOKEN = "reviewer@safeforge.local", "screenshot-password", "screenshot-token-0123"
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


# Collapse Label Studio's own side panels (regions, info) to give the task the width, and open the
# corrections panel so that the prefilled formalization fields show.
PREPARE_PAGE = """(() => {
  document.querySelectorAll('.lsf-tabs-panel__toggle_alignment_right').forEach(t => t.click());
  const corrections = [...document.querySelectorAll('.ant-collapse-header')]
      .find(h => h.textContent.includes('Correct the formalization'));
  if (corrections) corrections.click();
  return true;
})()"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def login_cookies(url: str) -> dict[str, str]:
    """Log in through Label Studio's login form, as a browser would; returns the session cookies."""
    with httpx.Client(base_url=url, follow_redirects=False, trust_env=False) as http:
        http.get("/user/login/")
        response = http.post(
            "/user/login/",
            data={"email": USERNAME, "password": PASSWORD, "csrfmiddlewaretoken": http.cookies["csrftoken"]},
            headers={"Referer": f"{url}/user/login/"},
        )
        if response.status_code != 302:
            raise SystemExit(f"logging in to {url} failed (HTTP {response.status_code})")
        return dict(http.cookies)


class DevTools:
    """A minimal Chrome DevTools Protocol session on one page."""

    def __init__(self, socket_):
        self.socket, self.next_id = socket_, 0

    async def call(self, method: str, **params) -> dict:
        self.next_id += 1
        await self.socket.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            message = json.loads(await self.socket.recv())
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})

    async def evaluate(self, expression: str):
        result = await self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        return result.get("result", {}).get("value")

    async def wait_for(self, expression: str, timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while not await self.evaluate(expression):
            if time.monotonic() > deadline:
                raise SystemExit(f"timed out waiting for {what}")
            await asyncio.sleep(0.5)


async def capture(chromium: str, profile: Path, page_url: str, cookies: dict[str, str], base_url: str, width: int, height: int) -> bytes:
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
                raise SystemExit(f"{chromium} did not start (is it installed? apt-get install chromium)")
            await asyncio.sleep(0.2)
        port = int(port_file.read_text().split()[0])
        pages = httpx.get(f"http://127.0.0.1:{port}/json/list", trust_env=False).json()
        target = next(p for p in pages if p.get("type") == "page")
        async with websockets.connect(target["webSocketDebuggerUrl"], max_size=None) as socket_:
            tools = DevTools(socket_)
            await tools.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)
            for name, value in cookies.items():
                await tools.call("Network.setCookie", name=name, value=value, url=base_url)
            await tools.call("Page.navigate", url=page_url)
            await tools.wait_for(
                "!!document.querySelector('.sf-plans') && document.querySelectorAll('.sf-step').length > 0", 90, "the task to render"
            )
            await asyncio.sleep(2)  # let the prediction and fonts settle
            await tools.evaluate(PREPARE_PAGE)
            await asyncio.sleep(1)
            shot = await tools.call("Page.captureScreenshot", format="png")
            return base64.b64decode(shot["data"])
    finally:
        browser.terminate()
        try:
            browser.wait(timeout=10)
        except subprocess.TimeoutExpired:
            browser.kill()
            browser.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="kitchen_mopped_floor_hot_soup", help="example task to show")
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "review-interface.png")
    parser.add_argument("--chromium", default="chromium")
    parser.add_argument("--width", type=int, default=1800)
    parser.add_argument("--height", type=int, default=1500)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="safeforge-screenshot-") as tmp:
        handle = start_server(Path(tmp) / "labelstudio", free_port(), USERNAME, PASSWORD, TOKEN)
        try:
            store = demo_run(Path(tmp) / "demo", [args.task])
            config = ReviewConfig(url=handle.url, api_key=TOKEN, username=USERNAME, password=PASSWORD)
            result = push_run(store, config)
            page = f"{handle.url}/projects/{result.project_id}/data?labeling=1"  # the annotators' queue
            png = asyncio.run(
                capture(args.chromium, Path(tmp) / "chromium", page, login_cookies(handle.url), handle.url, args.width, args.height)
            )
        finally:
            stop_server(handle)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(png)
    print(f"wrote {args.out} ({len(png) / 1e6:.2f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
