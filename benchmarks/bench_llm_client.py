"""Benchmark: Safeforge's LLM client against the latency bound and under a server's rate limit.

The replay server runs in its own process (`python -m safeforge.llm.replay_server`), as a user runs it.

1. Latency bound. For each latency L and concurrency C: N = waves x C JSON calls, each a cache miss
   (a new record id), made by `LLMClient.complete_json` as the pipeline makes them (its limiter, its
   SQLite cache and call ledger, JSON-schema parsing, its retry policy) with `max_concurrency` C. No
   client can finish before ceil(N / C) x L; the ratio is that bound over the wall time. Beside it, in
   the same run, paired in time: the bare `openai.AsyncOpenAI` client (`chat.completions.create`, the
   same requests, C at a time) with the SDK's default transport (httpx) and with the aiohttp one
   LLMClient uses. Warm process: one call of each client comes first. `--repeat` pairs each;
   medians are printed. A run pays the first wave's start and the spread of the last (about C x
   the CPU of a request each): more waves amortise them, so each `--waves` count is a run of its
   own (a count whose bound would exceed `--max-bound-s` is skipped). Beside each ratio, the CPU a
   call cost the client's process and the server's, and the ceiling one event loop puts on the
   ratio: it completes at most 1 / (its CPU per call) calls a second, and the bound asks C / L, so
   no run of that client can exceed L / (C x its CPU per call).
2. Rate limit. The server is started with `--rpm R` (and `--tpm T`; a bucket holding a minute's
   allowance, refilled continuously): past it, 429 with Retry-After. Other requests first spend
   its allowance; from that moment, for `--window` seconds, the client keeps C calls going (a)
   with `requests_per_minute` / `tokens_per_minute` set to the server's and (b) with neither set,
   relying on the 429s. Printed: calls completed in the window against the server's refill in it
   (target >= 0.95), HTTP attempts and the 429s.

Usage: .venv/bin/python benchmarks/bench_llm_client.py [--latencies-ms 200,2000] [--concurrency 64,256]
       [--waves 10,50] [--max-bound-s 30] [--repeat 3] [--rpm 1200] [--tpm 0] [--rate-concurrency 64] [--window 40] [--only latency|rate]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import openai
import psutil
from pydantic import BaseModel

from safeforge.llm import LLMClient, LLMConfig, LLMError

REPO = Path(__file__).resolve().parents[1]
PADDING = "lorem ipsum " * 650  # about the pipeline's mean request: ~1,950 tokens in per call
MODEL = "deepseek-chat"


class Hazard(BaseModel):
    """The reply's schema (the replayed reply below conforms to it)."""

    hazard: str
    severity: int


REPLY = {"hazard": "bleach mixed with ammonia", "severity": 3}


def write_replay(folder: Path) -> Path:
    """One hand-written entry answering every benchmark request."""
    replay = folder / "replay"
    replay.mkdir()
    entry = {"match": {"contains": ["benchmark record"]}, "response": {"content": REPLY}}
    (replay / "bench.json").write_text(json.dumps([entry]), encoding="utf-8")
    return replay


def start_server(replay: Path, *options: str) -> tuple[subprocess.Popen[str], str]:
    command = [sys.executable, "-m", "safeforge.llm.replay_server", "--responses", str(replay), *options]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, cwd=REPO)
    assert process.stdout is not None
    line = process.stdout.readline()
    if "listening on" not in line:
        process.kill()
        raise SystemExit(f"replay server did not start: {line!r}")
    return process, line.rsplit(" ", 1)[-1].strip()


def admin(base_url: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base_url.removesuffix("/v1") + path, data=data, method="GET" if body is None else "POST")
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def messages(number: int) -> list[dict[str, str]]:
    return [{"role": "user", "content": f"benchmark record {number}\n{PADDING}"}]


def config(base_url: str, db: Path, concurrency: int, **limits: Any) -> LLMConfig:
    return LLMConfig(base_url=base_url, api_key=None, model=MODEL, db_path=db, max_concurrency=concurrency, **limits)


async def ours(base_url: str, db: Path, calls: int, concurrency: int) -> float:
    """Wall seconds for `calls` JSON calls through LLMClient, `concurrency` at a time (as the
    pipeline's lanes make them; its own limiter admits `concurrency` too)."""
    async with LLMClient(config(base_url, db, concurrency)) as client:
        slots = asyncio.Semaphore(concurrency)

        async def one(number: int) -> None:
            async with slots:
                await client.complete_json("extract", f"r{number}", messages(number), Hazard, "bench")

        started = time.perf_counter()
        await asyncio.gather(*(one(n) for n in range(calls)))
        return time.perf_counter() - started


async def bare(base_url: str, calls: int, concurrency: int, aiohttp: bool) -> float:
    """Wall seconds for the same requests made by the bare openai client, `concurrency` at a time,
    with the SDK's default transport (httpx) or the aiohttp one LLMClient uses."""
    transport = openai.DefaultAioHttpClient() if aiohttp else None
    async with openai.AsyncOpenAI(base_url=base_url, api_key="bench", max_retries=0, http_client=transport) as client:
        slots = asyncio.Semaphore(concurrency)

        async def one(number: int) -> None:
            async with slots:
                await client.chat.completions.create(model=MODEL, messages=messages(number))  # type: ignore[arg-type]

        started = time.perf_counter()
        await asyncio.gather(*(one(n) for n in range(calls)))
        return time.perf_counter() - started


class Measured:
    """A client's runs at one (L, C, waves): ratios to the bound, and the CPU per call of the
    client's process and of the server's."""

    def __init__(self) -> None:
        self.ratios: list[float] = []
        self.client_ms: list[float] = []
        self.server_ms: list[float] = []

    def run(self, timed: Coroutine[Any, Any, float], bound: float, calls: int, server: psutil.Process) -> None:
        server_before, client_before = sum(server.cpu_times()[:2]), time.process_time()
        wall = asyncio.run(timed)
        client_after, server_after = time.process_time(), sum(server.cpu_times()[:2])
        self.ratios.append(bound / wall)
        self.client_ms.append(1000 * (client_after - client_before) / calls)
        self.server_ms.append(1000 * (server_after - server_before) / calls)

    def line(self, name: str, latency_ms: float, concurrency: int) -> str:
        client_ms = statistics.median(self.client_ms)
        ceiling = min(1.0, latency_ms / (concurrency * client_ms))
        return (
            f"{name} {', '.join(f'{r:.2f}' for r in self.ratios)} (median {statistics.median(self.ratios):.2f}; "
            f"CPU a call: client {client_ms:.2f} ms, server {statistics.median(self.server_ms):.2f} ms; "
            f"one loop's ceiling {ceiling:.2f})"
        )


def latency_bound(folder: Path, replay: Path, args: argparse.Namespace) -> None:
    latencies_ms, concurrencies, waves_counts = numbers(args.latencies_ms, float), numbers(args.concurrency, int), numbers(args.waves, int)
    print("1. ratio to the latency bound ceil(N/C) x L (1.00 = no overhead), ours vs the bare openai client, paired")
    for latency_ms in latencies_ms:
        server, url = start_server(replay, "--latency-ms", f"{latency_ms:g}")
        try:
            # warm process: each client's lazy imports are done before it is timed
            asyncio.run(ours(url, folder / f"warm-{latency_ms:g}.sqlite", 1, 1))
            asyncio.run(bare(url, 1, 1, aiohttp=False))
            asyncio.run(bare(url, 1, 1, aiohttp=True))
            for concurrency in concurrencies:
                for waves in waves_counts:
                    calls = waves * concurrency
                    bound = waves * latency_ms / 1000
                    if bound > args.max_bound_s:
                        print(f"   L={latency_ms:g} ms C={concurrency} {waves} waves: skipped (bound {bound:g} s > --max-bound-s)")
                        continue
                    runs = {name: Measured() for name in ("ours", "bare openai (httpx)", "bare openai (aiohttp)")}
                    serving = psutil.Process(server.pid)
                    for n in range(args.repeat):
                        runs["bare openai (httpx)"].run(bare(url, calls, concurrency, aiohttp=False), bound, calls, serving)
                        runs["bare openai (aiohttp)"].run(bare(url, calls, concurrency, aiohttp=True), bound, calls, serving)
                        db = folder / f"llm-{latency_ms:g}-{concurrency}-{waves}-{n}.sqlite"
                        runs["ours"].run(ours(url, db, calls, concurrency), bound, calls, serving)
                    stats = admin(url, "/admin/stats")
                    figures = "\n      ".join(measured.line(name, latency_ms, concurrency) for name, measured in runs.items())
                    print(
                        f"   L={latency_ms:g} ms C={concurrency} {waves} waves, N={calls} (bound {bound:.1f} s), "
                        f"server max in flight {stats['max_in_flight']}, load {os.getloadavg()[0]:.1f}:\n      {figures}",
                        flush=True,
                    )
                    admin(url, "/admin/reset", {})
        finally:
            server.terminate()
            server.wait()


def drain(base_url: str) -> float:
    """Spend the server's allowance (requests until the first 429); returns when it was spent."""

    async def go() -> None:
        async with openai.AsyncOpenAI(base_url=base_url, api_key="bench", max_retries=0) as client:
            refused = asyncio.Event()

            async def lane(number: int) -> None:
                while not refused.is_set():
                    try:
                        await client.chat.completions.create(model=MODEL, messages=messages(number))  # type: ignore[arg-type]
                    except openai.RateLimitError:
                        refused.set()
                    number += 64

            await asyncio.gather(*(lane(n) for n in range(64)))

    asyncio.run(go())
    return time.perf_counter()


async def keep_busy(base_url: str, db: Path, concurrency: int, until: float, **limits: Any) -> tuple[list[float], int, int, int]:
    """`concurrency` workers making calls until `until` (perf_counter): the times the calls
    completed, the calls that failed for good, the HTTP attempts made and those refused with a 429
    after the first second (when the first wave's answers are in)."""
    done: list[float] = []
    failed = 0
    started = time.time()
    async with LLMClient(config(base_url, db, concurrency, **limits)) as client:
        deadline = until

        async def worker(lane: int) -> None:
            nonlocal failed
            number = lane
            while time.perf_counter() < deadline:
                try:
                    await client.complete_json("extract", f"w{number}", messages(number), Hazard, "bench")
                    done.append(time.perf_counter())
                except LLMError:
                    failed += 1
                number += concurrency

        await asyncio.gather(*(worker(lane) for lane in range(concurrency)))
        rows = client.ledger.rows()
    attempts = sum(row.outcome != "cache_hit" for row in rows)
    late = sum(row.outcome == "retry_rate_limit" and row.created_at > started + 1 for row in rows)
    return done, failed, attempts, late


def rate_limit(folder: Path, replay: Path, rpm: float, tpm: float, concurrency: int, window_s: float) -> None:
    """Calls completed in a window that starts when the server's allowance is spent, against what
    the server refills in it."""
    tokens = len(messages(0)[0]["content"]) // 4 + len(json.dumps(REPLY)) // 4
    rate = min(rpm, tpm / tokens if tpm else math.inf)
    print(
        f"2. rate limit: server --rpm {rpm:g} --tpm {tpm:g} (a call is {tokens} tokens: {rate:g} calls/min), {concurrency} calls "
        f"at a time, for {window_s:g} s from the moment the server's allowance was spent (by other requests); calls "
        f"completed in that window against the server's refill in it"
    )
    cases = {"configured": {"requests_per_minute": rpm, "tokens_per_minute": tpm or None}, "not configured": {}}
    for name, limits in cases.items():
        server, url = start_server(replay, "--latency-ms", "200", "--rpm", f"{rpm:g}", "--tpm", f"{tpm:g}")  # a full bucket
        try:
            spent = drain(url)
            refused_before = admin(url, "/admin/stats")["rate_limited"]
            db = folder / f"rate-{name}.sqlite"
            done, failed, attempts, late = asyncio.run(keep_busy(url, db, concurrency, spent + window_s, **limits))
            refused = admin(url, "/admin/stats")["rate_limited"] - refused_before
        finally:
            server.terminate()
            server.wait()
        in_window = sum(t < spent + window_s for t in done)
        allowance = 1 + rate * window_s / 60
        print(
            f"   client limits {name}: {in_window} calls in the window = {in_window / allowance:.3f} of the allowance "
            f"({allowance:.0f}; target >= 0.95); {len(done)} calls in all, {failed} failed, {attempts} HTTP attempts, "
            f"{refused} answered 429 ({refused / max(1, attempts):.1%} of the attempts), {late} of them after the first second",
            flush=True,
        )


def numbers(text: str, kind: type) -> list:
    return [kind(part) for part in text.split(",") if part.strip()]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latencies-ms", default="200,2000", help="server latencies, comma-separated")
    parser.add_argument("--concurrency", default="64,256", help="concurrencies, comma-separated")
    parser.add_argument("--waves", default="10,50", help="calls per run = waves x concurrency; comma-separated, a run each")
    parser.add_argument("--max-bound-s", type=float, default=30, help="skip a run whose bound (waves x latency) is longer")
    parser.add_argument("--repeat", type=int, default=3, help="paired repeats per (latency, concurrency)")
    parser.add_argument("--rpm", type=float, default=1200, help="the server's request limit per minute")
    parser.add_argument("--tpm", type=float, default=0, help="the server's token limit per minute (0: none)")
    parser.add_argument("--rate-concurrency", type=int, default=64, help="calls in flight in the rate-limit part")
    parser.add_argument("--window", type=float, default=40, help="seconds measured in the rate-limit part")
    parser.add_argument("--only", choices=("latency", "rate"), help="run one part only")
    args = parser.parse_args()
    logging.getLogger("safeforge.llm").setLevel(logging.CRITICAL)  # retries and unpriced calls are counted, not logged
    with tempfile.TemporaryDirectory(prefix="bench-llm-") as scratch:
        folder = Path(scratch)
        replay = write_replay(folder)
        if args.only != "rate":
            latency_bound(folder, replay, args)
        if args.only != "latency":
            rate_limit(folder, replay, args.rpm, args.tpm, args.rate_concurrency, args.window)
    return 0


if __name__ == "__main__":
    sys.exit(main())
