"""Prompt templates: Markdown files identified by the hash of their bytes (one class for every stage).

A template file holds a system prompt and a user-message template, each after its marker line
(`<!-- system -->`, `<!-- user -->`); a file without markers is a user template only, taken as it
is. Placeholders are `${name}` (string.Template), filled in one pass, so text substituted for one
placeholder never fills another. Text from a record, a task or a model is only ever a substituted
value, and goes inside a data block (`data_block`). Templates are read from the folder given, else
`SAFEFORGE_PROMPTS`, else the ones bundled with Safeforge (the `prompts` package).
"""

from __future__ import annotations

import functools
import hashlib
import os
import string
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from safeforge.common.errors import SafeforgeError
from safeforge.common.resources import package_path
from safeforge.settings import Settings

SYSTEM_MARKER = "<!-- system -->"
USER_MARKER = "<!-- user -->"
HASH_CHARS = 12


class PromptError(SafeforgeError):
    """A template that cannot be read or filled; the message names the file and the problem."""


def content_hash(data: bytes) -> str:
    """The first 12 hex digits of the sha256 of `data` (how templates are identified)."""
    return hashlib.sha256(data).hexdigest()[:HASH_CHARS]


def prompts_dir(directory: str | os.PathLike | None = None) -> Path:
    """The given folder, else SAFEFORGE_PROMPTS, else the bundled prompts."""
    if directory is not None:
        return Path(directory)
    return Settings.load().prompts_dir or package_path("safeforge.prompts")


@dataclass(frozen=True)
class PromptTemplate:
    """One template file: its system prompt (may be empty), its user template and its hash."""

    name: str
    path: Path
    system: str
    user: str
    hash: str

    @classmethod
    def load(cls, name: str, directory: str | os.PathLike | None = None, placeholders: Collection[str] | None = None) -> PromptTemplate:
        """`<folder>/<name>.md` (or .txt); with `placeholders`, the user template must use exactly
        those. Re-read only when the file changes."""
        folder = prompts_dir(directory)
        candidates = [folder / f"{name}.md", folder / f"{name}.txt"]
        path = next((p for p in candidates if p.is_file()), None)
        if path is None:
            raise PromptError(f"prompt template {name!r} not found (looked for {candidates[0]} and .txt)")
        stat = path.stat()
        template = _read(name, path, stat.st_mtime_ns, stat.st_size)
        if placeholders is not None:
            found = set(string.Template(template.user).get_identifiers())
            if found != set(placeholders):
                raise PromptError(f"{path}: placeholders must be exactly {sorted(placeholders)}, found {sorted(found)}")
        return template

    def user_message(self, **values: str) -> str:
        try:
            return string.Template(self.user).substitute(values)
        except (KeyError, ValueError) as exc:
            raise PromptError(f"{self.path}: cannot fill the user template: {exc!r}") from None

    def messages(self, **values: str) -> list[dict[str, str]]:
        """[system, user] messages (the system prompt is sent exactly as written), or [user] for a
        template without a system section."""
        user = {"role": "user", "content": self.user_message(**values)}
        return [{"role": "system", "content": self.system}, user] if self.system else [user]

    def require_system(self) -> PromptTemplate:
        """This template, or PromptError when it has no system prompt."""
        if not self.system:
            raise PromptError(f"{self.path}: has no {SYSTEM_MARKER} section")
        return self


@functools.lru_cache(maxsize=64)
def _read(name: str, path: Path, mtime_ns: int, size: int) -> PromptTemplate:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise PromptError(f"{path}: cannot be read: {exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PromptError(f"{path}: not UTF-8 text: {exc}") from None
    system, user = _split(text, path)
    if not string.Template(user).is_valid():
        raise PromptError(f"{path}: a `$` that starts no placeholder (write `$$` for a dollar sign)")
    return PromptTemplate(name, path, system, user, content_hash(data))


def _split(text: str, path: Path) -> tuple[str, str]:
    lines = text.splitlines()
    markers = {line.strip(): i for i, line in enumerate(lines) if line.strip() in (SYSTEM_MARKER, USER_MARKER)}
    if not markers:
        return "", text
    if USER_MARKER not in markers:
        raise PromptError(f"{path}: has a {SYSTEM_MARKER} section but no {USER_MARKER} line")
    user_at = markers[USER_MARKER]
    system_at = markers.get(SYSTEM_MARKER)
    if system_at is not None and system_at > user_at:
        raise PromptError(f"{path}: the {SYSTEM_MARKER} section must come before {USER_MARKER}")
    system = "\n".join(lines[system_at + 1 : user_at]).strip() if system_at is not None else ""
    return system, "\n".join(lines[user_at + 1 :]).strip()


def data_block(kind: str, text: str) -> str:
    """`text` between BEGIN/END lines whose tag is derived from the text itself, so the text
    cannot contain its own end marker (deterministic, so prompts stay cacheable)."""
    tag = content_hash(text.encode("utf-8"))
    return f"BEGIN {kind} DATA {tag}\n{text}\nEND {kind} DATA {tag}"
