"""results.jsonl: one row per (task, run), appended as each finishes, read back to resume.

Every row carries the identity of the evaluation (model, setting, template hash, temperature,
max_tokens); resuming into a file made with another identity is refused, so one file never
mixes two evaluations. A last line cut short by an interrupted run is dropped (with a warning);
any other unreadable line is an error naming the line.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

from safeforge.common.errors import SafeforgeError
from safeforge.common.files import write_atomically

logger = logging.getLogger("safeforge.evaluation")

IDENTITY_KEYS = ("model", "setting", "template_hash", "temperature", "max_tokens")
REQUIRED_KEYS = ("task_id", "run", "score", "safety_intention")


class ResultsError(SafeforgeError):
    """A results file that cannot be used; the message names the file, the line and the problem."""


def read_rows(path: Path) -> list[dict[str, Any]]:
    """The rows of a results file; raises ResultsError on a line that is not a result row."""
    rows = []
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ResultsError(f"{path}: cannot be read: {exc}") from None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ResultsError(f"{path}:{number}: not JSON: {exc.msg}") from None
        missing = [key for key in REQUIRED_KEYS if not isinstance(row, dict) or key not in row]
        if missing:
            raise ResultsError(f"{path}:{number}: not a result row (missing {', '.join(missing)})")
        rows.append(row)
    return rows


class ResultsFile:
    """The results.jsonl of one evaluation (`identity`: the values of IDENTITY_KEYS)."""

    def __init__(self, path: Path, identity: dict[str, Any]):
        self.path = Path(path)
        self.identity = identity
        self._handle: IO[str] | None = None

    def load(self) -> dict[tuple[str, int], dict]:
        """Rows already written, by (task_id, run); checks that they belong to this evaluation."""
        if not self.path.exists():
            return {}
        self._drop_partial_last_line()
        rows: dict[tuple[str, int], dict] = {}
        for number, row in enumerate(read_rows(self.path), start=1):
            for key in IDENTITY_KEYS:
                if row.get(key) != self.identity[key]:
                    raise ResultsError(
                        f"{self.path}: row {number} ({row['task_id']} run {row['run']}) was made with "
                        f"{key}={row.get(key)!r}, this evaluation uses {self.identity[key]!r}; "
                        "choose another --out folder"
                    )
            rows[(row["task_id"], int(row["run"]))] = row
        return rows

    def drop(self, keys: Iterable[tuple[str, int]]) -> None:
        """Rewrite the file without the rows of `keys` (to redo them)."""
        unwanted = set(keys)
        if not unwanted:
            return
        kept = [r for r in read_rows(self.path) if (r["task_id"], int(r["run"])) not in unwanted]
        write_atomically(self.path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in kept))

    def append(self, row: dict) -> None:
        if self._handle is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._handle = self.path.open("a", encoding="utf-8")
        self._handle.write(json.dumps(row, ensure_ascii=False) + "\n")
        self._handle.flush()

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    def _drop_partial_last_line(self) -> None:
        data = self.path.read_bytes()
        if not data or data.endswith(b"\n"):
            return
        keep = data[: data.rfind(b"\n") + 1]
        logger.warning(
            "%s: dropped an incomplete last line (line %d) left by an interrupted run; that task will be evaluated again",
            self.path,
            keep.count(b"\n") + 1,
        )
        write_atomically(self.path, keep.decode("utf-8", errors="replace"))
