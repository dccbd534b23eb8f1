"""Deterministic selection over a record stream: --sample N --seed S, --offset, --limit.

Order of operations: sample (if asked), then offset, then limit. Sampling keeps the N records
whose keyed hash blake2b(seed, record_id) is smallest ("bottom-k"): the same ids are chosen
whatever the file order, memory holds only N records, and the chosen ones come out in source
order. Without --sample the stream is never buffered and stops reading once --limit is reached.
"""

from __future__ import annotations

import hashlib
import heapq
from collections.abc import Iterable, Iterator

from safeforge.sources.record import Record
from safeforge.sources.report import ReadReport


def sample_key(record_id: str, seed: int) -> int:
    """The rank of a record in the sample for `seed` (smaller = chosen first)."""
    digest = hashlib.blake2b(record_id.encode("utf-8"), digest_size=8, key=str(seed).encode("utf-8"))
    return int.from_bytes(digest.digest(), "big")


def sample(records: Iterable[Record], size: int, seed: int, report: ReadReport) -> Iterator[Record]:
    """The `size` records of smallest `sample_key`, in their original order."""
    heap: list[tuple[int, int, Record]] = []  # (-key, -position, record): a max-heap on key
    for position, record in enumerate(records):
        entry = (-sample_key(record.record_id, seed), -position, record)
        if len(heap) < size:
            heapq.heappush(heap, entry)
        elif entry > heap[0]:
            heapq.heapreplace(heap, entry)
            report.filter_out("not in sample")
        else:
            report.filter_out("not in sample")
    for _, _, record in sorted(heap, key=lambda e: -e[1]):
        yield record


def select(
    records: Iterable[Record],
    report: ReadReport,
    *,
    limit: int | None = None,
    offset: int = 0,
    sample_size: int | None = None,
    seed: int = 0,
) -> Iterator[Record]:
    """Apply sample, offset and limit; count every record yielded in `report`."""
    if limit is not None and limit < 0:
        raise ValueError("limit must be >= 0")
    if offset < 0:
        raise ValueError("offset must be >= 0")
    if sample_size is not None and sample_size < 1:
        raise ValueError("sample size must be >= 1")
    return _select(records, report, limit, offset, sample_size, seed)


def _select(
    records: Iterable[Record], report: ReadReport, limit: int | None, offset: int, sample_size: int | None, seed: int
) -> Iterator[Record]:
    if limit == 0:
        return
    stream = records if sample_size is None else sample(records, sample_size, seed, report)
    emitted = 0
    for record in stream:
        if offset:
            offset -= 1
            report.filter_out("before offset")
            continue
        report.yielded += 1
        yield record
        emitted += 1
        if limit is not None and emitted >= limit:
            break
    if sample_size is not None:  # the sample was read in full: account for what limit left out
        for _ in stream:
            report.filter_out("after limit")
    elif (close := getattr(records, "close", None)) is not None:  # stopped early: let the reader close its file now
        close()
