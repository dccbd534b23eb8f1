"""Opening source files as text: existence checks, encoding detection, BOMs, stray bytes.

UTF-8 (with or without BOM) is assumed when the first 64 KiB decode as UTF-8; otherwise the file
is read as Windows-1252 (what CPSC exports use). Either way undecodable bytes become U+FFFD
instead of stopping the read.
"""

from __future__ import annotations

import codecs
from pathlib import Path
from typing import Any

from safeforge.common.jsonio import JSONRefused, load_json
from safeforge.common.limits import beyond, current_limits
from safeforge.sources.errors import SourceError

SNIFF_BYTES = 64 * 1024
ERRORS = "replace"
_BINARY_MAGIC = {
    b"PK\x03\x04": "a zip/xlsx archive",
    b"\x1f\x8b": "a gzip file",
    b"7z\xbc\xaf": "a 7z archive",
    b"\xd0\xcf\x11\xe0": "an old Excel/OLE file",
}


def require_file(path: Path) -> Path:
    """`path` as an existing regular file, or a SourceError saying what is wrong."""
    if not path.exists():
        raise SourceError(path, "file not found")
    if not path.is_file():
        raise SourceError(path, "not a file")
    return path


def require_dir(path: Path) -> Path:
    if not path.exists():
        raise SourceError(path, "directory not found")
    if not path.is_dir():
        raise SourceError(path, "not a directory")
    return path


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
    if head.startswith(codecs.BOM_UTF8):
        return "utf-8-sig"
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16"
    try:
        codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
    except UnicodeDecodeError:
        return "cp1252"
    return "utf-8-sig"


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
