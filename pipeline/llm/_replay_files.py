"""Hand-written replay files: loading, validation and matching (format: see replay_server)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from safeforge.common.errors import SafeforgeError

FAULT_PATTERN = re.compile(r"^(?:[45]\d\d(?::\d+(?:\.\d+)?)?|timeout|malformed_json|truncated)$")
FAULT_HELP = '"429" or "429:<retry-after seconds>", another HTTP status such as "500" or "401", "timeout", "malformed_json" or "truncated"'


class ReplayFormatError(SafeforgeError, ValueError):
    """A replay file that cannot be read or does not follow the format."""


def check_fault(fault: str) -> str:
    if not FAULT_PATTERN.match(fault):
        raise ValueError(f"unknown fault {fault!r}; expected {FAULT_HELP}")
    return fault


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ReplayMatch(_Strict):
    contains: list[str] = Field(min_length=1)
    """Substrings that must all occur in the request's message contents."""
    assistant_turns: int | None = Field(None, ge=0)
    """Assistant messages already in the request (0 = first round, 1 = first repair...)."""


class ReplayResponse(_Strict):
    content: str | dict[str, Any] | list[Any]
    """The reply; a JSON object or array is serialised to text."""
    finish_reason: Literal["stop", "length", "content_filter"] = "stop"

    @property
    def text(self) -> str:
        return self.content if isinstance(self.content, str) else json.dumps(self.content, ensure_ascii=False)


class ReplayEntry(_Strict):
    match: ReplayMatch
    response: ReplayResponse
    faults: list[str] = Field(default_factory=list)
    """Applied to the first len(faults) matching requests, in order."""

    @field_validator("faults")
    @classmethod
    def known_faults(cls, faults: list[str]) -> list[str]:
        return [check_fault(f) for f in faults]


@dataclass(frozen=True)
class LoadedEntry:
    source: str
    """`<file>#<index>`, used in error messages and stats."""
    entry: ReplayEntry

    def matches(self, text: str, assistant_turns: int) -> bool:
        wanted = self.entry.match
        return all(s in text for s in wanted.contains) and wanted.assistant_turns in (None, assistant_turns)


def _raw_entries(path: Path) -> list[Any]:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    data = json.loads(text)
    return data if isinstance(data, list) else [data]


def load_entries(directory: Path) -> list[LoadedEntry]:
    """Every entry of the *.json / *.jsonl files under `directory`, in path order."""
    directory = Path(directory)
    if not directory.is_dir():
        raise ReplayFormatError(f"replay directory not found: {directory}")
    loaded: list[LoadedEntry] = []
    for path in sorted(p for p in directory.rglob("*") if p.suffix in (".json", ".jsonl") and p.is_file()):
        name = path.relative_to(directory).as_posix()
        try:
            raw = _raw_entries(path)
        except (OSError, json.JSONDecodeError) as exc:
            raise ReplayFormatError(f"{name}: {exc}") from exc
        for index, item in enumerate(raw):
            try:
                loaded.append(LoadedEntry(f"{name}#{index}", ReplayEntry.model_validate(item)))
            except ValidationError as exc:
                raise ReplayFormatError(f"{name}#{index}: {exc}") from exc
    if not loaded:
        raise ReplayFormatError(f"no replay entries in {directory} (expected *.json or *.jsonl files)")
    return loaded


def message_text(message: dict[str, Any]) -> str:
    """A message's content as text (the text parts of a multi-part content)."""
    content = message.get("content")
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content if isinstance(content, str) else ""
