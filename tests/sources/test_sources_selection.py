"""Selection: deterministic --sample/--seed, --offset, --limit; read = yielded + skipped + filtered."""

from __future__ import annotations

import pytest

from safeforge.sources import ReadReport, Record, iter_records, sample_key, select


def ids(source, **options):
    return [r.record_id for r in iter_records(source, **options)]


def make(n):
    return [Record(f"r{i}", "test", f"text {i}") for i in range(n)]


def test_sample_is_deterministic_and_depends_on_the_seed():
    first = ids("neiss", sample=10, seed=7)
    assert first == ids("neiss", sample=10, seed=7)
    assert first != ids("neiss", sample=10, seed=8)
    assert len(set(first)) == 10
    assert first[:3] == ["neiss_210841843", "neiss_170351234", "neiss_221149398"]  # stable across runs
    everything = ids("neiss")
    assert first == [i for i in everything if i in set(first)]  # source order kept


def test_sample_does_not_depend_on_input_order():
    records = make(1000)
    forward = {r.record_id for r in select(records, ReadReport(), sample_size=25, seed=3)}
    backward = {r.record_id for r in select(reversed(records), ReadReport(), sample_size=25, seed=3)}
    assert forward == backward
    assert forward == set(sorted((r.record_id for r in records), key=lambda i: sample_key(i, 3))[:25])


def test_sample_larger_than_the_source_keeps_everything():
    assert len(ids("alfred", sample=100, seed=1)) == 22


def test_offset_and_limit_page_through_the_stream():
    everything = ids("bddl")
    assert ids("bddl", offset=5, limit=3) == everything[5:8]
    assert ids("bddl", offset=48) == everything[48:]
    assert ids("bddl", limit=0) == []


def test_sample_then_offset_then_limit():
    sampled = ids("virtualhome", sample=10, seed=2)
    assert ids("virtualhome", sample=10, seed=2, offset=4, limit=3) == sampled[4:7]


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"limit": 3},
        {"offset": 10, "limit": 5},
        {"sample": 7, "seed": 1},
        {"sample": 7, "offset": 2, "limit": 2},
        {"products": [5040], "min_age": 18},
        {"sample": 5, "locations": ["PUBLIC"]},
    ],
)
def test_every_row_read_is_accounted_for(options):
    report = ReadReport()
    yielded = list(iter_records("neiss", report=report, **options))
    assert report.yielded == len(yielded)
    assert report.read == report.yielded + report.skipped_total + report.filtered_total


def test_limit_stops_reading_early():
    report = ReadReport()
    assert len(list(iter_records("neiss", report=report, offset=2, limit=3))) == 3
    assert report.read == 5 and report.filtered == {"before offset": 2}


@pytest.mark.parametrize(
    "options, message",
    [
        ({"limit": -1}, "limit"),
        ({"offset": -2}, "offset"),
        ({"sample": 0}, "sample"),
        ({"settings": ["kitchen"]}, "neiss has no option"),
    ],
)
def test_bad_options_are_errors(options, message):
    with pytest.raises(ValueError, match=message):
        iter_records("neiss", **options)


def test_unknown_source_is_an_error():
    with pytest.raises(ValueError, match="unknown source 'wikihow'"):
        iter_records("wikihow")
