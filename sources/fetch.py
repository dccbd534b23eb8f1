"""`fetch`: a source's full public data into `<data dir>/<source>/`, downloaded, verified, installed.

Each `Download` of the source's spec (or of a catalog file given instead) is fetched over HTTP into
`.downloads/<file>.part` and resumed from where it stopped (HTTP Range) when a fetch is run again;
its size and sha256 are checked before anything is installed — against the pinned checksum, else
against the one recorded at the first download (the file's publisher gives none). A mismatch
discards the file. The file, or the archive's content, is then moved into place in one rename, and
the manifest (`.safeforge-fetched.json`, written last) names what is complete: readers never see a
partial or unverified download.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tarfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

import httpx

from safeforge.common.errors import SafeforgeError
from safeforge.common.progress import StatusLine
from safeforge.sources.errors import UnknownSource
from safeforge.sources.paths import MANIFEST, data_root, fetched
from safeforge.sources.registry import get_source
from safeforge.sources.spec import Download

CHUNK = 1 << 20
DOWNLOADS = ".downloads"
TIMEOUT_S = 60.0


class FetchError(SafeforgeError):
    """A download that failed or did not verify; the message names the source and the URL."""

    exit_code = 1


@dataclass(frozen=True)
class Fetched:
    source: str
    key: str
    path: Path
    sha256: str
    pinned: bool
    reused: bool
    """Already installed and verified: nothing was downloaded."""


def catalog_downloads(catalog: Path, source: str) -> list[Download]:
    """The downloads a catalog file (JSON: {source: [Download fields, ...]}) lists for `source`."""
    try:
        entries = json.loads(catalog.read_text(encoding="utf-8"))[source]
        return [Download(**entry) for entry in entries]
    except KeyError:
        raise UnknownSource(f"{catalog}: no downloads for {source}") from None
    except (OSError, ValueError, TypeError) as exc:
        raise FetchError(f"{catalog}: not a usable catalog: {exc}") from None


def fetch(
    source: str,
    keys: list[str] | None = None,
    *,
    catalog: Path | None = None,
    from_file: Path | None = None,
    progress: StatusLine | None = None,
) -> list[Fetched]:
    """Fetch and install the downloads of `source` named by `keys` (default: the source's default
    set). `from_file` installs a file downloaded by hand instead (one download)."""
    spec = get_source(source)
    if catalog is not None:
        available = catalog_downloads(catalog, source)
        wanted = [d for d in available if not keys or d.key in keys]
        missing = sorted(set(keys or []) - {d.key for d in wanted})
        if missing:
            raise UnknownSource(
                f"unknown version(s) {', '.join(missing)} of {source} in {catalog} (available: {', '.join(d.key for d in available)})"
            )
    else:
        try:
            wanted = spec.downloads(keys)
        except ValueError as exc:
            raise UnknownSource(f"{source}: {exc}") from None
    if from_file is not None and len(wanted) != 1:
        raise UnknownSource(f"--from installs one file; name which one ({', '.join(d.key for d in wanted)})")
    line = progress if progress is not None else StatusLine()
    root = data_root(source)
    root.mkdir(parents=True, exist_ok=True)
    results = []
    for download in wanted:
        results.append(_fetch_one(source, download, root, from_file, line, spec.extras))
    line.close()
    return results


def _fetch_one(source: str, download: Download, root: Path, from_file: Path | None, line: StatusLine, extras: dict[str, str]) -> Fetched:
    done = fetched(source).get(download.key)
    if done and from_file is None and (root / done["installed"]).exists():
        return Fetched(source, download.key, root / done["installed"], done["sha256"], done["pinned"], True)
    expected = download.sha256 or (done or {}).get("sha256")
    part = root / DOWNLOADS / (download.file + ".part")
    part.parent.mkdir(parents=True, exist_ok=True)
    if from_file is not None:
        shutil.copyfile(from_file, part)
    elif download.url is None:
        raise FetchError(f"{source} {download.key} cannot be downloaded automatically: {download.note}")
    else:
        _download(source, download.url, download, part, line)
    digest = _sha256(part)
    where = from_file or download.url
    if download.size is not None and part.stat().st_size != download.size:
        size = part.stat().st_size
        part.unlink()
        raise FetchError(f"{source} {download.key} from {where}: {size} bytes, expected {download.size}; the file was discarded")
    if expected is not None and digest != expected:
        part.unlink()
        raise FetchError(
            f"{source} {download.key} from {where}: sha256 {digest} does not match "
            f"{'the pinned' if download.sha256 else 'the first download'}'s {expected}; "
            "the file was discarded"
        )
    installed = _install(source, download, part, root, extras)
    _record(root, download, installed.relative_to(root), digest)
    return Fetched(source, download.key, installed, digest, download.sha256 is not None, False)


def _download(source: str, url: str, download: Download, part: Path, line: StatusLine) -> None:
    have = part.stat().st_size if part.exists() else 0
    headers = {"Range": f"bytes={have}-"} if have else {}
    started, label = time.monotonic(), f"{source} {download.key}"
    try:
        with httpx.stream("GET", url, headers=headers, follow_redirects=True, timeout=TIMEOUT_S) as response:
            if response.status_code == 416 and have:  # nothing left to fetch: verify what is there
                return
            if response.status_code not in (200, 206):
                raise FetchError(f"{label}: {download.url} answered HTTP {response.status_code}")
            resumed = response.status_code == 206
            total = _total(response, have if resumed else 0) or download.size
            with open(part, "ab" if resumed else "wb") as out:
                got = have if resumed else 0
                for chunk in response.iter_bytes():  # as it arrives: nothing received is lost at a cut
                    out.write(chunk)
                    got += len(chunk)
                    _show(line, label, got, total, started, have if resumed else 0)
            _show(line, label, got, total, started, have if resumed else 0, final=True)
    except httpx.HTTPError as exc:
        raise FetchError(
            f"{label}: cannot download {download.url} ({type(exc).__name__}: {exc}); "
            f"run the same command again to resume, or download the file elsewhere and install "
            f"it with --from"
        ) from None


def _total(response: httpx.Response, offset: int) -> int | None:
    length = response.headers.get("content-length")
    return int(length) + offset if length and length.isdigit() else None


def _show(line: StatusLine, label: str, got: int, total: int | None, started: float, offset: int, final: bool = False) -> None:
    rate = (got - offset) / max(time.monotonic() - started, 1e-6)
    left = f", ETA {int((total - got) / rate)}s" if total and rate > 0 else ""
    size = f"{got / 1e6:.1f}/{total / 1e6:.1f} MB" if total else f"{got / 1e6:.1f} MB"
    line.update(f"{label}: {size} at {rate / 1e6:.1f} MB/s{left}", fraction=got / total if total else None, final=final)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(CHUNK), b""):
            digest.update(block)
    return digest.hexdigest()


def _install(source: str, download: Download, part: Path, root: Path, extras: dict[str, str]) -> Path:
    """Move the verified file (or its archive's content) into place; returns what was installed."""
    if download.unpack is None:
        target = root / download.file
        os.replace(part, target)
        return target
    staging = root / DOWNLOADS / f"{download.key}.staging"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    try:
        _unpack(source, download, part, staging, extras)
        installed = []
        for entry in sorted(staging.iterdir()):
            target = root / entry.name
            if target.exists():
                shutil.rmtree(target) if target.is_dir() else target.unlink()
            os.replace(entry, target)
            installed.append(target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    part.unlink()
    if not installed:
        raise FetchError(f"{source} {download.key}: the archive {download.file} is empty")
    return installed[0]


def _unpack(source: str, download: Download, archive: Path, into: Path, extras: dict[str, str]) -> None:
    try:
        if download.unpack == "zip":
            with zipfile.ZipFile(archive) as zipped:
                for name in zipped.namelist():
                    if name.startswith("/") or ".." in Path(name).parts:
                        raise FetchError(f"{source} {download.key}: the archive holds an unsafe path {name!r}")
                zipped.extractall(into)
        elif download.unpack == "tar.gz":
            with tarfile.open(archive, "r:gz") as tarred:
                tarred.extractall(into, filter="data")
        elif download.unpack == "7z":
            try:
                import py7zr  # pyright: ignore[reportMissingImports]  (optional: not installed by default)
            except ImportError:
                raise FetchError(f"{source} {download.key} is a 7z archive: install {extras.get('7z', 'py7zr')} to unpack it") from None
            with py7zr.SevenZipFile(archive) as sevenzipped:
                sevenzipped.extractall(into)
        else:
            raise FetchError(f"{source} {download.key}: unknown archive format {download.unpack!r}")
    except (zipfile.BadZipFile, tarfile.TarError, OSError, EOFError) as exc:
        raise FetchError(f"{source} {download.key}: cannot unpack {download.file}: {exc}") from None


def _record(root: Path, download: Download, installed: Path, digest: str) -> None:
    manifest = json.loads((root / MANIFEST).read_text(encoding="utf-8")) if (root / MANIFEST).exists() else {}
    manifest[download.key] = {
        "installed": str(installed),
        "file": download.file,
        "url": download.url,
        "sha256": digest,
        "pinned": download.sha256 is not None,
        "at": time.time(),
    }
    temporary = root / (MANIFEST + ".tmp")
    temporary.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    os.replace(temporary, root / MANIFEST)


def describe(result: Fetched) -> str:
    checksum = "pinned sha256 verified" if result.pinned else "sha256 recorded (no published checksum)"
    what = "already there" if result.reused else "installed"
    return f"{result.source} {result.key}: {what} at {result.path} ({checksum}: {result.sha256[:12]}...)"


__all__ = ["FetchError", "Fetched", "describe", "fetch"]
