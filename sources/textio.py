"""Opening source files as text: existence checks, encoding detection, BOMs, stray bytes.

UTF-8 (with or without BOM) is assumed when the first 64 KiB decode as UTF-8; otherwise the file
is read as Windows-1252 (what CPSC exports use, e.g. a NEISS export saved by a spreadsheet).
`choose_encoding` says which and why, or takes the user's `--encoding`. Either way undecodable
bytes become U+FFFD instead of stopping the read (a table's row holding one is skipped: see
`looks_corrupt`).
"""

from __future__ import annotations

import codecs
import os
import re
from pathlib import Path
from typing import Any

from safeforge.common.jsonio import JSONRefused, load_json
from safeforge.common.limits import beyond, current_limits
from safeforge.sources.errors import SourceError
from safeforge.sources.report import ReadReport, SkippedRow

SNIFF_BYTES = 64 * 1024
ERRORS = "replace"
_BINARY_MAGIC = {
    b"PK\x03\x04": "a zip/xlsx archive",
    b"\x1f\x8b": "a gzip file",
    b"7z\xbc\xaf": "a 7z archive",
    b"\xd0\xcf\x11\xe0": "an old Excel/OLE file",
}


NOT_FOLLOWED = "links inside a dataset are not followed because one may lead outside it or loop back into it"
LINK_SKIPPED = f"is a symbolic link; {NOT_FOLLOWED}"
"""Why a link inside a dataset folder is skipped: the path a user names is used as given, but what a
dataset holds is its own files only (docs/sources.md)."""


def require_file(path: Path) -> Path:
    """`path` as an existing regular file, or a SourceError saying what is wrong."""
    if not path.exists():
        raise SourceError(path, broken_link(path) or "file not found")
    if not path.is_file():
        raise SourceError(path, "not a file")
    return path


def require_dir(path: Path) -> Path:
    if not path.exists():
        raise SourceError(path, broken_link(path) or "directory not found")
    if not path.is_dir():
        raise SourceError(path, "not a directory")
    return path


def broken_link(path: Path) -> str | None:
    """What is wrong with `path` when it is a symbolic link that leads nowhere (None otherwise)."""
    if not path.is_symlink():
        return None
    try:
        path.resolve(strict=True)
    except FileNotFoundError:
        return f"is a symbolic link to {os.readlink(path)!r}, which does not exist"
    except (RuntimeError, OSError):  # RuntimeError: Python's own "symlink loop" (3.11)
        return f"is a symbolic link that loops back on itself (it points to {os.readlink(path)!r})"
    return None


def dataset_entries(root: Path, max_depth: int | None = None) -> tuple[list[Path], list[Path]]:
    """(files, links) under the folder `root`, down to `max_depth` folders deep (None: all): its
    regular files, and the symbolic links met on the way, which are not followed (`LINK_SKIPPED`)."""
    files: list[Path] = []
    links: list[Path] = []
    folders = [(root, 0)]
    while folders:
        folder, depth = folders.pop()
        try:
            with os.scandir(folder) as entries:
                found = list(entries)
        except OSError as exc:
            raise SourceError(folder, f"cannot list the folder: {exc.strerror or exc}") from exc
        for entry in found:
            if entry.is_symlink():
                links.append(Path(entry.path))
            elif entry.is_dir(follow_symlinks=False):
                if max_depth is None or depth < max_depth:
                    folders.append((Path(entry.path), depth + 1))
            elif entry.is_file(follow_symlinks=False):
                files.append(Path(entry.path))
    return sorted(files), sorted(links)


def skip_links(links: list[Path], report: ReadReport) -> None:
    """Each symbolic link met in a dataset folder: read, and skipped as not followed."""
    for link in links:
        report.read += 1
        report.skip(SkippedRow(str(link), None, None, LINK_SKIPPED))


def links_not_followed(links: list[Path]) -> str:
    """For a "nothing found" message: the links that were not followed, if any."""
    if not links:
        return ""
    return f" ({len(links)} symbolic link(s) in it, e.g. {links[0].name}; {NOT_FOLLOWED})"


def sniff(path: Path) -> bytes:
    """The first bytes of a file; SourceError if it cannot be opened or is a known binary format."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(SNIFF_BYTES)
    except OSError as exc:
        raise SourceError(path, f"cannot read file: {exc.strerror or exc}") from exc
    for magic, kind in _BINARY_MAGIC.items():
        if head.startswith(magic):
            raise SourceError(path, f"unreadable: this is {kind}, not text (export it to CSV/TSV)")
    return head


def detect_encoding(head: bytes) -> str:
    """A Python codec name for bytes that start a text file."""
    return choose_encoding(head)[0]


def choose_encoding(head: bytes, given: str | None = None) -> tuple[str, str]:
    """(codec, why) for a text file starting with `head`: `given` (the user's --encoding), else
    as its byte-order mark says, else UTF-8 when its start decodes as UTF-8, else cp1252."""
    if given is not None:
        return given, "--encoding"
    if head.startswith(codecs.BOM_UTF8):
        return "utf-8-sig", "UTF-8 byte-order mark"
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16", "UTF-16 byte-order mark"
    try:
        codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
    except UnicodeDecodeError:
        return "cp1252", "not UTF-8"
    return "utf-8-sig", "valid UTF-8"


def text_encoding(name: str) -> str:
    """The codec `name` (an --encoding value) as Python names it; ValueError when it is no text encoding."""
    try:
        b"x".decode(name)
    except LookupError:  # unknown, or a codec that is no text encoding (rot13)
        raise ValueError("not a text encoding Python knows (e.g. utf-8, cp1252, latin-1, utf-16)") from None
    except UnicodeError:
        pass  # a text encoding that "x" alone is not (UTF-16)
    return codecs.lookup(name).name


_CORRUPT = re.compile(
    "(?P<control>[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f])|(?P<undecodable>\ufffd)|(?P<bom>\ufeff|\xff\xfe|\xfe\xff|\xef\xbb\xbf)"
)
_SUSPECT = re.compile("[\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f\\x7f-\\x9f\\ufeff\\ufffd\\xbb\\xfe\\xff]")  # a character of some _CORRUPT match
_CORRUPTION = {
    "control": "a control character",
    "undecodable": "bytes that are not {encoding}",
    "bom": "a byte-order mark inside a field",
}


def looks_corrupt(text: str, encoding: str) -> tuple[str, int] | None:
    """(what, where) when `text`, decoded as `encoding`, holds what corruption leaves: a control
    character, undecodable bytes (U+FFFD), or a byte-order mark (as it is, or as UTF-16's or
    UTF-8's bytes read as cp1252: "ÿþ", "ï»¿"); None for clean text. Tabs and line ends are text."""
    if _SUSPECT.search(text) is None:  # one character class: the fast path of clean rows
        return None
    found = _CORRUPT.search(text)
    if found is None:
        return None
    kind = found.lastgroup or "control"
    return _CORRUPTION[kind].format(encoding=encoding.removesuffix("-sig")), found.start()


def read_text(path: Path, limit: str = "record_file_bytes") -> str:
    """The whole file as text, decoded as `detect_encoding` says; ValueError for a file beyond the
    input limit named `limit` (memory stays bounded whatever the file says)."""
    size = require_file(path).stat().st_size
    if size > getattr(current_limits(), limit):
        raise ValueError(beyond(limit, f"file is {size:,} bytes"))
    head = sniff(path)
    try:
        return path.read_bytes().decode(detect_encoding(head), errors=ERRORS)
    except OSError as exc:
        raise SourceError(path, f"cannot read file: {exc.strerror or exc}") from exc


def read_json(path: Path) -> Any:
    """Parsed JSON; ValueError (with the line) when it is not valid JSON or nests beyond the limit."""
    try:
        return load_json(read_text(path))
    except JSONRefused as exc:
        raise ValueError(f"{exc.message} (line {exc.line})") from None
