"""NEISS adapter throughput and peak memory on a full-year-sized file (not a test).

Builds CSV files of 30,000 and 300,000 rows by repeating the bundled sample's rows (each with a
unique CPSC case number), reads each in a fresh process through `safeforge.sources.iter_records`, and
prints records/s and peak resident memory. Targets: >= 20,000 records/s on the large file, and
peak memory that does not grow with the file (large/small peak ratio <= 1.2).

    .venv/bin/python benchmarks/bench_neiss.py [--rows 300000] [--small-rows 30000]
"""

from __future__ import annotations

import argparse
import csv
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_RECORDS_PER_S = 20_000
TARGET_MEMORY_RATIO = 1.2


def build_file(sample: Path, rows: int, out: Path) -> Path:
    """`rows` data rows cycling through `sample`, case numbers made unique."""
    with open(sample, newline="", encoding="utf-8-sig") as handle:
        header, *data = list(csv.reader(handle))
    case = header.index("CPSC_Case_Number")
    with open(out, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        for i in range(rows):
            row = list(data[i % len(data)])
            row[case] = str(900_000_000 + i)
            writer.writerow(row)
    return out


def measure(path: Path | None) -> dict:
    """Run in the child: read every record of `path` (None: imports only) and report."""
    from safeforge.sources import ReadReport, iter_records

    report = ReadReport()
    start = time.perf_counter()
    count = sum(1 for _ in iter_records("neiss", path, report=report)) if path else 0
    seconds = time.perf_counter() - start
    return {
        "records": count,
        "seconds": seconds,
        "skipped": report.skipped_total,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def run_child(path: Path | None) -> dict:
    argv = [sys.executable, __file__, "--measure", str(path) if path else ""]
    done = subprocess.run(argv, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=300_000)
    parser.add_argument("--small-rows", type=int, default=30_000)
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure is not None:
        print(json.dumps(measure(Path(args.measure) if args.measure else None)))
        return 0

    from safeforge.sources.paths import sample_path

    def default_path() -> Path:
        return sample_path("neiss", "holdout_labeled.csv")

    baseline = run_child(None)
    print(f"baseline (imports only): peak RSS {baseline['peak_rss_mb']:.0f} MB")
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for rows in (args.small_rows, args.rows):
            path = build_file(default_path(), rows, Path(tmp) / f"neiss_{rows}.csv")
            size_mb = path.stat().st_size / 2**20
            result = results[rows] = run_child(path)
            rate = result["records"] / result["seconds"]
            print(
                f"{rows:>9,} rows ({size_mb:.0f} MB): {result['records']:,} records in "
                f"{result['seconds']:.2f} s = {rate:,.0f} records/s; "
                f"peak RSS {result['peak_rss_mb']:.0f} MB "
                f"({result['peak_rss_mb'] - baseline['peak_rss_mb']:.0f} MB above baseline)"
            )
    large, small = results[args.rows], results[args.small_rows]
    rate = large["records"] / large["seconds"]
    ratio = large["peak_rss_mb"] / small["peak_rss_mb"]
    print(f"peak memory ratio {args.rows:,}/{args.small_rows:,} rows: {ratio:.2f}")
    speed_ok, memory_ok = rate >= TARGET_RECORDS_PER_S, ratio <= TARGET_MEMORY_RATIO
    print(
        f"target >= {TARGET_RECORDS_PER_S:,} records/s: {'met' if speed_ok else 'NOT met'}; "
        f"memory flat (ratio <= {TARGET_MEMORY_RATIO}): {'met' if memory_ok else 'NOT met'}"
    )
    return 0 if speed_ok and memory_ok else 1


if __name__ == "__main__":
    sys.exit(main())
