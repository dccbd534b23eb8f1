"""Source adapters: each turns one public dataset into `Record`s for the danger extractor.

    from sources import iter_records, ReadReport
    report = ReadReport()
    for record in iter_records("neiss", "neiss2023.tsv", report=report, products=[1842], limit=10):
        print(record.record_id, record.text)
    print(report.summary())

Sources: neiss, normbank, bddl, virtualhome, alfred (see `SOURCES`).
"""
from sources.errors import SourceError
from sources.record import Record
from sources.registry import SOURCES, SourceSpec, default_path, get_source, iter_records
from sources.report import ReadReport, SkippedRow
from sources.selection import sample_key, select

__all__ = [
    "Record", "ReadReport", "SkippedRow", "SourceError", "SourceSpec", "SOURCES",
    "default_path", "get_source", "iter_records", "sample_key", "select",
]
