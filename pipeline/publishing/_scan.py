"""What a release may not carry: a path of the machine that built it, or an e-mail address.

Paths: any absolute path (`/a/b`, `C:\\a`, `file:/...`, `~/a`), and the home, outputs, data and
checkout folders wherever they appear. Every string is checked before anything is written or
pushed: each task's public metadata and PDDL field by field (`task_problems`, so a refusal names
the task and the field), then every built file (`folder_problems`: parquet cells, JSON values, the
card, each member of tasks.tar.gz, the text chunks of the plots).
"""

from __future__ import annotations

import json
import re
import struct
import tarfile
import zlib
from collections.abc import Iterator
from pathlib import Path

from safeforge.settings import Settings

_NOT_INSIDE_A_PATH = r"(?<![\w.~:/\\-])"  # not inside a URL, a relative path or a word
PATTERNS = (  # (what, regular expression); each needs a "/", "@" or backslash; the first is checked apart
    ("an absolute path", _NOT_INSIDE_A_PATH + r"/[\w.@%+-]+(?:/[\w.@%+-]+)+"),
    ("a path in a home folder", r"(?<![\w/])~/[\w.@%+-]+"),
    ("a Windows path", r"(?<![\w])[A-Za-z]:\\[\w.@%+ -]+"),
    ("a file URL", r"\bfile:/[^\s\"'<>)]*"),
    ("an e-mail address", r"[\w.%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b"),
)


def machine_folders() -> list[str]:
    """The folders of this machine whose names a release must not hold: home, outputs, data, checkout."""
    settings = Settings.load()
    checkout = Path(__file__).resolve().parents[2]  # the checkout (or site-packages) safeforge runs from
    folders = {str(p) for p in (Path.home(), settings.outputs, settings.data_dir, checkout)}
    folders |= {str(Path(p).resolve()) for p in folders}
    return sorted(f for f in folders if len(f.strip("/")) > 1)


class LeakScanner:
    """Finds machine paths and e-mail addresses in strings (the folders are read once, when made)."""

    def __init__(self) -> None:
        patterns = [
            *PATTERNS,
            *((f"this machine's folder {f}", _NOT_INSIDE_A_PATH + re.escape(f) + r"(?![\w.-])") for f in machine_folders()),
        ]
        self.names = [what for what, _ in patterns]
        self.pattern = re.compile("|".join(f"(?P<p{n}>{pattern})" for n, (_, pattern) in enumerate(patterns)))

    def leaks(self, value, field: str = "") -> Iterator[tuple[str, str, str]]:
        """(field, what, the text found) for every string in `value` (nested dicts and lists too;
        fields named as `a.b[0].c`) that holds a machine path or an e-mail address."""
        if isinstance(value, str):
            if "/" in value or "@" in value or "\\" in value:  # every pattern needs one of them
                for match in self.pattern.finditer(value):
                    kind = int(str(match.lastgroup)[1:])
                    if kind == 0 and match.group() == match.group().upper():
                        continue  # "/ABRASION/LAC": prose in capitals (NEISS narratives), not a path
                    yield field, self.names[kind], match.group()
        elif isinstance(value, dict):
            for key, item in value.items():
                yield from self.leaks(str(key), f"{field}{'.' if field else ''}{key} (key)")
                yield from self.leaks(item, f"{field}{'.' if field else ''}{key}")
        elif isinstance(value, (list, tuple)):
            for index, item in enumerate(value):
                yield from self.leaks(item, f"{field}[{index}]")

    def problems(self, where: str, value, field: str = "") -> list[str]:
        return [f"{where}: {name or 'text'} holds {what} ({text!r})" for name, what, text in self.leaks(value, field)]

    def task_problems(self, task_id: str, collection: str, metadata: dict, texts: dict[str, str]) -> list[str]:
        """Every leak in a task's public metadata (by field) and its files' texts (by file name)."""
        where = f"task {task_id} ({collection})"
        return self.problems(where, metadata, "metadata.json") + self.problems(where, texts)

    def folder_problems(self, folder: Path) -> list[str]:
        """Every leak in every file of a built release, naming the file and where in it."""
        found = []
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            name = path.relative_to(folder).as_posix()
            found += self.problems(name, name, "file name")
            for where, value in _file_values(path, name):
                found += self.problems(where, value)
        return found


# -- built files --------------------------------------------------------------------------------
def _png_texts(data: bytes) -> dict[str, str]:
    """The text chunks (tEXt, zTXt, iTXt) of a PNG file."""
    texts, offset = {}, 8
    while offset + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[offset : offset + 8])
        body = data[offset + 8 : offset + 8 + length]
        offset += 12 + length
        if kind == b"tEXt":
            key, _, text = body.partition(b"\0")
            texts[key.decode("latin-1")] = text.decode("latin-1")
        elif kind == b"zTXt":
            key, _, rest = body.partition(b"\0")
            texts[key.decode("latin-1")] = zlib.decompress(rest[1:]).decode("latin-1")
        elif kind == b"iTXt":
            key, _, rest = body.partition(b"\0")
            compressed, rest = rest[0], rest[2:]
            _language, _, rest = rest.partition(b"\0")
            _translated, _, text = rest.partition(b"\0")
            texts[key.decode("latin-1")] = (zlib.decompress(text) if compressed else text).decode("utf-8", "replace")
    return texts


def _text_or_json(name: str, data: bytes):
    text = data.decode("utf-8", errors="replace")
    if name.endswith(".json"):
        try:
            return json.loads(text)
        except ValueError:
            return text
    return text


def _file_values(path: Path, name: str) -> Iterator[tuple[str, object]]:
    """(where, value) pairs that make up a built file's strings."""
    if name.endswith(".parquet"):
        import pyarrow.parquet as pq

        for number, row in enumerate(pq.read_table(path).to_pylist(), start=1):
            yield f"{name} row {number} (task {row.get('task_id')})", row
    elif name.endswith(".tar.gz"):
        with tarfile.open(path) as archive:
            for member in archive.getmembers():
                handle = archive.extractfile(member) if member.isfile() else None
                yield f"{name} member {member.name}", [member.name, _text_or_json(member.name, handle.read()) if handle else ""]
    elif name.endswith(".png"):
        yield f"{name} text chunks", _png_texts(path.read_bytes())
    else:
        yield name, _text_or_json(name, path.read_bytes())
