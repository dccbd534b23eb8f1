"""`Record`: what every source adapter yields and the danger extractor reads."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Record:
    """One item of a source.

    record_id: stable across runs and unique within a source (e.g. ``neiss_170957638``).
    source:    the registry name of the source (``neiss``, ``normbank``, ``bddl``, ...).
    text:      what the danger extractor reads.
    metadata:  the source's own fields (JSON-serialisable).
    origin:    where it came from: ``path/file.csv:row 12`` (1-based data row) or a file path.
    """

    record_id: str
    source: str
    text: str
    metadata: dict[str, Any] = field(default_factory=dict)
    origin: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def to_json(self) -> str:
        """One line of JSON (UTF-8 text kept as is)."""
        return json.dumps(self.to_dict(), ensure_ascii=False)
