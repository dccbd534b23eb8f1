"""`PDDLError`: PDDL that cannot be used, with the file and line (importable without Unified Planning)."""

from __future__ import annotations

from dataclasses import dataclass

from safeforge.common.errors import SafeforgeError


@dataclass
class PDDLError(SafeforgeError):
    """PDDL that does not parse, or breaks the task format: where, and what is wrong."""

    file: str
    message: str
    line: int | None = None
    column: int | None = None  # from 1, when known

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.message}"
