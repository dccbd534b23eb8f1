"""Source adapters: each turns one public dataset into `Record`s for the danger extractor.

    from safeforge.sources import iter_records, ReadReport
    report = ReadReport()
    for record in iter_records("neiss", "neiss2023.tsv", report=report, products=[1842], limit=10):
        print(record.record_id, record.text)
    print(report.summary())

Sources: neiss, normbank, bddl, virtualhome, alfred, and any registered by another package (see
`SOURCES` and `safeforge.sources.registry`), each one module with its `SPEC`. Names are imported
from their modules on first use.
"""

from typing import TYPE_CHECKING

from safeforge.common.lazy import lazy_exports

if TYPE_CHECKING:  # the public names; at run time each loads on first use (lazy_exports reads this block)
    from .errors import SourceError, UnknownSource
    from .record import Record
    from .registry import SOURCES, default_location, default_path, get_source, iter_records, register_source, task_source
    from .report import ReadReport, SkippedRow
    from .selection import sample_key, select
    from .spec import Download, Licence, Range, SourceOption, SourceSpec, fixed_downloads

__all__ = [
    "SourceError",
    "UnknownSource",
    "Record",
    "SOURCES",
    "default_location",
    "default_path",
    "get_source",
    "iter_records",
    "register_source",
    "task_source",
    "ReadReport",
    "SkippedRow",
    "sample_key",
    "select",
    "Download",
    "Licence",
    "Range",
    "SourceOption",
    "SourceSpec",
    "fixed_downloads",
]
__getattr__, __dir__ = lazy_exports(__name__)
