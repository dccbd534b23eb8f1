"""Benchmark: generation throughput against the LLM latency bound, calls and tokens per accepted
task, and the 0-call re-run.

Setup: N copies of the scripted NEISS record neiss_220705908 under new case numbers (a temporary
NEISS CSV with repeated rows) and a temporary replay directory whose entries give every copy the
record's hand-written responses; the replay server runs in its own process with a fixed latency.

1. LLM path: `generate_run` with concurrency C over the N records. Each record needs k = 3
   sequential calls (extract, generate, judge), so no run can finish before the latency bound
   ceil(N / C) * k * latency. The copies share their PDDL, so the execution check is computed
   once by the real checker before the timed run and reused for identical PDDL (a
   content-addressed memo kept in this script): this isolates what the pipeline adds to the
   LLM's latency. Prints tasks/min, the
   bound and their ratio (target >= 0.8), the same against the round trip of one request sent
   alone to the same server (a baseline measured in the same run: the server's fixed delay plus
   its HTTP/TCP overhead), the same 3 calls per record made by the bare `openai` client at the same
   concurrency (a baseline measured in the same run: what the HTTP client alone reaches on this
   machine), the CPU each record costs the pipeline (user and system: the kernel's part is mostly
   creating the record's files) and the replay server, the time this machine
   takes to create a file in the scratch folder (a baseline measured in the same run: a record's
   files cost CPU in the kernel, and disks differ by 20x in this), and LLM calls and tokens per
   accepted task. With --repeat K the run and its bare-client baseline are measured K times, in
   pairs, and every ratio and the medians are printed (figures here vary from run to run).
2. The same command again on the same run: the number of HTTP requests the server saw (target 0).
3. End to end with the real checker on every record (M records, same concurrency): tasks/min and
   the mean check time (the in-process search, raced by the planners when it takes over 0.1 s),
   and the ratio to the latency bound (a run of one or two waves pays the check's time on top).

Usage: .venv/bin/python benchmarks/bench_generation.py [--records 320] [--concurrency 16]
       [--latency-ms 200] [--real-check-records 16] [--repeat 1] [--workers 1] [--scratch outputs]
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import math
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import httpx
import openai

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from memo_checker import MemoChecker  # noqa: E402

from safeforge.generation import GenerationSettings, check_candidate, generate_run, local_executor  # noqa: E402
from safeforge.llm import LLMClient, LLMConfig  # noqa: E402
from safeforge.runs.ledger import RunStore  # noqa: E402
from safeforge.sources import default_path, iter_records  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
TEMPLATE_RECORD = "neiss_220705908"
CALLS_PER_RECORD = 3
FIRST_CASE = 800_000_001


def write_inputs(folder: Path, count: int) -> tuple[Path, Path]:
    """A NEISS CSV with `count` copies of the template record's row, and replay files for them."""
    source = default_path("neiss")
    with source.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        fields = reader.fieldnames
        row = next(r for r in reader if f"neiss_{r['CPSC_Case_Number']}" == TEMPLATE_RECORD)
    data = folder / "neiss_copies.csv"
    with data.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        for i in range(count):
            writer.writerow({**row, "CPSC_Case_Number": str(FIRST_CASE + i)})
    shutil.copy(source.parent / "neiss_code_text_mapping.csv", folder)
    # One entry per stage serves every copy (their ids share the prefix neiss_8000): the replay
    # server then matches each request against 3 entries, not 3 per record.
    template = json.loads((REPO / "pipeline" / "llm" / "replay_responses" / f"{TEMPLATE_RECORD}.json").read_text(encoding="utf-8"))
    for entry in template:
        entry["match"]["contains"] = [c.replace(TEMPLATE_RECORD, f"neiss_{str(FIRST_CASE)[:4]}") for c in entry["match"]["contains"]]
    replay = folder / "replay"
    replay.mkdir()
    (replay / "copies.json").write_text(json.dumps(template), encoding="utf-8")
    return data, replay


def start_server(replay: Path, latency_ms: float) -> tuple[subprocess.Popen, str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "safeforge.llm.replay_server", "--responses", str(replay), "--latency-ms", str(latency_ms)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )
    line = process.stdout.readline()
    if "listening on" not in line:
        process.kill()
        raise SystemExit(f"replay server did not start: {line!r}")
    return process, line.rsplit(" ", 1)[-1].strip()


def round_trip_s(base_url: str, count: int = 10) -> float:
    """Mean time of one chat request sent alone over a kept-alive connection: the replay server's
    latency as a client really sees it (its fixed delay plus HTTP and TCP overhead)."""
    body = {"model": "deepseek-chat", "messages": [{"role": "user", "content": f"stage: extract\nrecord_id: neiss_{FIRST_CASE}"}]}
    with httpx.Client(timeout=30) as client:
        client.post(f"{base_url}/chat/completions", json=body).raise_for_status()
        started = time.perf_counter()
        for _ in range(count):
            client.post(f"{base_url}/chat/completions", json=body).raise_for_status()
    return (time.perf_counter() - started) / count


PADDING = "lorem ipsum " * 650  # about the pipeline's mean request: ~1,950 tokens in per call


def bare_client_s(base_url: str, records: int, concurrency: int) -> float:
    """Seconds the bare `openai` client takes for `records` x 3 sequential calls, `concurrency`
    records at a time, against the same server: the HTTP client's own ceiling."""

    async def go() -> float:
        transport = openai.DefaultAioHttpClient()  # the transport LLMClient uses
        async with openai.AsyncOpenAI(base_url=base_url, api_key="bench", max_retries=0, http_client=transport) as client:
            slots = asyncio.Semaphore(concurrency)

            async def record(number: int) -> None:
                async with slots:
                    for stage in ("extract", "generate", "judge"):
                        content = f"stage: {stage}\nrecord_id: neiss_{FIRST_CASE + number}\n" + PADDING
                        await client.chat.completions.create(model="deepseek-chat", messages=[{"role": "user", "content": content}])

            started = time.perf_counter()
            await asyncio.gather(*(record(n) for n in range(records)))
            return time.perf_counter() - started

    return asyncio.run(go())


def file_create_ms(folder: Path, count: int = 200) -> float:
    """Mean milliseconds to create and write one small file in a new subfolder of `folder`, as a
    record's files are (a baseline measured in the same run: disks differ by 20x in this). The
    files stay until the scratch folder goes: on an ext4 disk without a journal, every file created
    afterwards skips the inodes deleted in the last minutes one by one, so deleting them now would
    slow the timed runs' own files."""
    probe = folder / "file-probe"
    probe.mkdir()
    started = time.perf_counter()
    for number in range(count):
        sub = probe / str(number)
        sub.mkdir()
        (sub / "file.json").write_text("{}\n" * 500, encoding="utf-8")
    return (time.perf_counter() - started) / count * 1000


def worker_start_cpu_s() -> float:
    """CPU seconds a generation worker process spends starting (interpreter and imports), paid
    once per run by each of the `--workers - 1` worker processes (a baseline measured in the same run)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-c", "import safeforge.generation.worker"], check=True, cwd=REPO)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def cpu_seconds(pid: int) -> tuple[float, float]:
    """CPU seconds (user, system) a process and its waited-for children have used so far."""
    ticks = os.sysconf("SC_CLK_TCK")
    fields = [int(value) for value in Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[11:15]]
    return (fields[0] + fields[2]) / ticks, (fields[1] + fields[3]) / ticks  # utime + cutime, stime + cstime


def served(base_url: str) -> int:
    with urllib.request.urlopen(base_url.removesuffix("/v1") + "/admin/stats", timeout=5) as response:
        return json.loads(response.read())["requests"]


def run(root: Path, records, base_url: str, concurrency: int, settings: GenerationSettings, checker, workers: int = 1):
    store = RunStore(root)
    config = LLMConfig(
        base_url=base_url, model="deepseek-chat", db_path=root / "llm.sqlite", max_concurrency=concurrency, backoff_base_s=0.05
    )

    async def go():
        async with LLMClient(config) as client:
            return await generate_run(store, records, client, settings, concurrency, checker=checker, executor=local_executor(workers))

    try:
        return asyncio.run(go())
    finally:
        store.ledger.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=320)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--latency-ms", type=float, default=200.0)
    parser.add_argument("--real-check-records", type=int, default=16)
    parser.add_argument("--repeat", type=int, default=1, help="times the LLM path is measured (this machine's figures vary run to run)")
    parser.add_argument(
        "--workers", type=int, default=1, help="processes of the generation runs, the run's own included (safeforge generate --workers)"
    )
    parser.add_argument(
        "--scratch",
        type=Path,
        default=REPO / "outputs",
        help="where the runs are written (default: outputs/, where runs go by default; "
        "on some machines the system temp folder creates files 20x slower)",
    )
    args = parser.parse_args()
    if args.repeat < 1 or args.workers < 1:
        parser.error("--repeat and --workers must be at least 1")
    settings = GenerationSettings(planner_time_limit=60)
    latency = args.latency_ms / 1000
    args.scratch.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".bench-generation-", dir=args.scratch) as scratch:
        folder = Path(scratch)
        data, replay = write_inputs(folder, args.records)
        records = list(iter_records("neiss", data))
        server, url = start_server(replay, args.latency_ms)
        try:
            print(
                f"{len(records)} records (copies of {TEMPLATE_RECORD}), concurrency {args.concurrency}, "
                f"replay latency {args.latency_ms:g} ms, {CALLS_PER_RECORD} sequential calls per record"
            )
            memo = MemoChecker(settings)
            generated = next(e for e in json.loads((replay / "copies.json").read_text()) if "stage: generate" in e["match"]["contains"])[
                "response"
            ]["content"]
            memo.warm(generated["safety_domain"], generated["safety_problem"])
            trip = round_trip_s(url)
            create_ms = file_create_ms(folder)
            start_ms = worker_start_cpu_s() * (args.workers - 1) / len(records) * 1000
            waves = math.ceil(len(records) / args.concurrency) * CALLS_PER_RECORD
            bound, measured_bound = waves * latency, waves * trip
            ratios: list[tuple[float, float]] = []  # (pipeline, bare client) per repeat, paired in time
            cpu_ms: list[tuple[float, float]] = []  # the pipeline's CPU per record (user, system), per repeat
            for repeat in range(args.repeat):
                bare = bare_client_s(url, len(records), args.concurrency)
                before = [cpu_seconds(pid) for pid in (os.getpid(), server.pid)]
                summary = run(folder / f"llm-path-{repeat}", records, url, args.concurrency, settings, memo, args.workers)
                after = [cpu_seconds(pid) for pid in (os.getpid(), server.pid)]
                (user, system), (server_user, server_system) = [(a[0] - b[0], a[1] - b[1]) for a, b in zip(after, before, strict=True)]
                cpu = [user + system, server_user + server_system]
                ratios.append((bound / summary.seconds, bound / bare))
                cpu_ms.append((user / len(records) * 1000, system / len(records) * 1000))
            passed = summary.tasks_passed
            print(
                f"1. LLM path: {summary.states} in {summary.seconds:.2f}s = "
                f"{passed / summary.seconds * 60:,.0f} tasks/min (the check computed once before, reused "
                f"{len(records)} times)"
            )
            print(
                f"   latency bound at {args.latency_ms:g} ms: {bound:.2f}s ({len(records) / bound * 60:,.0f} "
                f"tasks/min), ratio bound/measured = {bound / summary.seconds:.2f} (target >= 0.80)"
            )
            print(
                f"   one request alone takes {trip * 1000:.0f} ms against this server (baseline measured now); "
                f"bound at that latency {measured_bound:.2f}s, ratio {measured_bound / summary.seconds:.2f}"
            )
            print(
                f"   the bare openai client, same calls and concurrency (baseline measured now): {bare:.2f}s, "
                f"ratio to the bound {bound / bare:.2f}; the pipeline takes {summary.seconds / bare:.2f}x the bare client"
            )
            print(
                f"   CPU per record: pipeline {cpu[0] / len(records) * 1000:.1f} ms ({cpu_ms[-1][0]:.1f} user, {cpu_ms[-1][1]:.1f} "
                f"system: the kernel's, mostly creating files; worker processes included), replay "
                f"server {cpu[1] / len(records) * 1000:.1f} ms; {(cpu[0] + cpu[1]) / summary.seconds:.2f} of "
                f"{os.cpu_count()} CPUs busy on average; creating a file in {args.scratch} takes "
                f"{create_ms:.2f} ms (measured now; a record creates 9 files and folders); the worker processes' start "
                f"(their imports, once per run) is {start_ms:.1f} ms of it per record (measured now)"
            )
            if args.repeat > 1:
                pipeline_ratios, bare_ratios = zip(*ratios, strict=True)
                print(
                    f"   {args.repeat} repeats (each paired with a bare-client run just before it): ratio "
                    f"{', '.join(f'{a:.2f}' for a, _ in ratios)} (median {statistics.median(pipeline_ratios):.2f}); "
                    f"bare client {', '.join(f'{b:.2f}' for _, b in ratios)} (median {statistics.median(bare_ratios):.2f}); "
                    f"the pipeline's CPU per record {', '.join(f'{u + k:.1f}' for u, k in cpu_ms)} ms "
                    f"(median {statistics.median(u + k for u, k in cpu_ms):.1f}, target <= 6; "
                    f"{statistics.median(u + k for u, k in cpu_ms) - start_ms:.1f} without the workers' start), of which user "
                    f"{', '.join(f'{u:.1f}' for u, _ in cpu_ms)} (median {statistics.median(u for u, _ in cpu_ms):.1f}); "
                    "the lines above are the last repeat's"
                )
            tokens = summary.tokens
            print(
                f"   per accepted task: {summary.calls / passed:.2f} LLM calls, tokens in "
                f"{tokens['in'] / passed:,.0f} (cached {tokens['cached'] / passed:,.0f}), out "
                f"{tokens['out'] / passed:,.0f}, ${summary.cost_usd / passed:.5f} at deepseek-chat prices "
                "(replay usage: characters / 4)"
            )
            before = served(url)
            again = run(folder / f"llm-path-{args.repeat - 1}", records, url, args.concurrency, settings, memo, args.workers)
            print(
                f"2. re-run of the same command: {served(url) - before} HTTP requests, {again.calls} calls, "
                f"{again.seconds:.2f}s, states {again.states}"
            )
            subset = records[: args.real_check_records]
            if not subset:
                return 0
            timed: list[float] = []

            def timed_check(task_dir: Path):
                started = time.monotonic()
                report = check_candidate(task_dir, settings.engine, settings.planner_time_limit)
                timed.append(time.monotonic() - started)
                return report

            real = run(folder / "real-checks", subset, url, args.concurrency, settings, timed_check)
            real_bound = math.ceil(len(subset) / args.concurrency) * CALLS_PER_RECORD * latency
            print(
                f"3. with the real checker on every record: {real.states} in {real.seconds:.2f}s = "
                f"{real.tasks_passed / real.seconds * 60:,.0f} tasks/min; {len(timed)} checks, "
                f"{sum(timed) / len(timed):.2f}s per check call; latency bound {real_bound:.2f}s, ratio "
                f"{real_bound / real.seconds:.2f}"
            )
        finally:
            server.terminate()
            server.wait(10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
