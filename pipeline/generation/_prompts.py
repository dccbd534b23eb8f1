"""Prompt templates: files in prompts/, identified by the hash of their bytes.

A template file holds a system prompt and a user-message template, in that order, each after its
marker line (`<!-- system -->`, `<!-- user -->`); a file without markers is a user template only.
Placeholders are `${name}` (string.Template). Text from a record or a model is only ever a
substituted value, never part of a template, and goes inside a data block (`data_block`).
"""
from __future__ import annotations

import functools
import hashlib
import os
import string
from dataclasses import dataclass
from pathlib import Path

from pipeline.common.resources import package_path
from pipeline.settings import Settings

PROMPTS_DIR = package_path("prompts")
SYSTEM_MARKER = "<!-- system -->"
USER_MARKER = "<!-- user -->"
HASH_CHARS = 12

EXTRACT = "extract_danger"
GENERATE = "generate_pddl"
FEEDBACK = "feedback"
JUDGE = "judge_task"


class PromptError(Exception):
    """A missing or malformed template (names the file)."""


@dataclass(frozen=True)
class PromptTemplate:
    """One template file: its system prompt, its user template and its content hash."""

    name: str
    path: Path
    system: str
    user: str
    hash: str

    def user_message(self, **values: str) -> str:
        try:
            return string.Template(self.user).substitute(values)
        except (KeyError, ValueError) as exc:
            raise PromptError(f"{self.path}: cannot fill the user template: {exc!r}") from None

    def messages(self, **values: str) -> list[dict[str, str]]:
        """[system, user] messages (the system prompt is sent exactly as written)."""
        if not self.system:
            raise PromptError(f"{self.path}: has no {SYSTEM_MARKER} section")
        return [{"role": "system", "content": self.system},
                {"role": "user", "content": self.user_message(**values)}]


@dataclass(frozen=True)
class PromptSet:
    """The templates of one run."""

    extract: PromptTemplate
    generate: PromptTemplate
    feedback: PromptTemplate
    judge: PromptTemplate

    def hashes(self) -> dict[str, str]:
        return {"extract": self.extract.hash, "generate": self.generate.hash,
                "feedback": self.feedback.hash, "judge": self.judge.hash}


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:HASH_CHARS]


def prompts_dir(directory: str | os.PathLike | None = None) -> Path:
    """The given directory, else $SAFEFORGE_PROMPTS, else the bundled prompts."""
    if directory is not None:
        return Path(directory)
    return Settings.load().prompts_dir or PROMPTS_DIR


def load_prompt(name: str, directory: str | os.PathLike | None = None) -> PromptTemplate:
    """Read `<directory>/<name>.md` (or .txt); re-read only when the file changes."""
    folder = prompts_dir(directory)
    candidates = [folder / f"{name}.md", folder / f"{name}.txt"]
    path = next((p for p in candidates if p.is_file()), None)
    if path is None:
        raise PromptError(f"prompt template {name!r} not found (looked for {candidates[0]} and .txt)")
    stat = path.stat()
    return _read_template(name, path, stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=64)
def _read_template(name: str, path: Path, mtime_ns: int, size: int) -> PromptTemplate:
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PromptError(f"{path}: not UTF-8: {exc}") from None
    system, user = _split(text, path)
    return PromptTemplate(name, path, system, user, content_hash(data))


def load_prompts(directory: str | os.PathLike | None = None) -> PromptSet:
    return PromptSet(*(load_prompt(n, directory) for n in (EXTRACT, GENERATE, FEEDBACK, JUDGE)))


def _split(text: str, path: Path) -> tuple[str, str]:
    lines = text.splitlines()
    markers = {line.strip(): i for i, line in enumerate(lines) if line.strip() in (SYSTEM_MARKER, USER_MARKER)}
    if not markers:
        return "", text.strip()
    if USER_MARKER not in markers:
        raise PromptError(f"{path}: has a {SYSTEM_MARKER} section but no {USER_MARKER} line")
    user_at = markers[USER_MARKER]
    system_at = markers.get(SYSTEM_MARKER)
    if system_at is not None and system_at > user_at:
        raise PromptError(f"{path}: the {SYSTEM_MARKER} section must come before {USER_MARKER}")
    system = "\n".join(lines[system_at + 1:user_at]).strip() if system_at is not None else ""
    return system, "\n".join(lines[user_at + 1:]).strip()


def data_block(kind: str, text: str) -> str:
    """`text` between BEGIN/END lines whose tag is derived from the text itself, so the text
    cannot contain its own end marker (deterministic, so prompts stay cacheable)."""
    tag = content_hash(text.encode("utf-8"))
    return f"BEGIN {kind} DATA {tag}\n{text}\nEND {kind} DATA {tag}"
