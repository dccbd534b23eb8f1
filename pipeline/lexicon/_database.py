"""WordNet, read with NLTK's WordNet reader, loaded once per process.

The database is Princeton WordNet 3.0 in its own file format (data.noun, index.noun, ...), as
Debian's `wordnet-base` installs it in /usr/share/wordnet (setup installs that package), or any
folder of those files named by `SAFEFORGE_WORDNET`. Nothing is downloaded at run time.

NLTK reads a database folder that also holds `lexnames` (the table of lexicographer files of the
format, lexnames(5WN), shipped here because Debian does not install it) and refuses links out of the
folder, so the files are copied once into a folder of our own in the user's cache
(`$XDG_CACHE_HOME/safeforge/wordnet-<digest>`). The reader's lemma index, which it would rebuild
from the index files on each start (about 2 s), is stored there too and read back.
"""

from __future__ import annotations

import functools
import gc
import hashlib
import os
import pickle
import shutil
import sys
import tempfile
import threading
import warnings
from pathlib import Path
from typing import Any

from safeforge.common.resources import package_path

WORDNET_ENV = "SAFEFORGE_WORDNET"
SYSTEM_FOLDERS = (Path("/usr/share/wordnet"), Path("/usr/local/share/wordnet"), Path("/opt/homebrew/share/wordnet/dict"))
DATABASE_FILES = tuple(f"{kind}.{pos}" for kind in ("data", "index") for pos in ("noun", "verb", "adj", "adv"))
EXCEPTION_FILES = tuple(f"{pos}.exc" for pos in ("noun", "verb", "adj", "adv"))
COUNTS_FILE = "cntlist.rev"  # how often each sense was tagged in WordNet's corpus (a word's usual part of speech)
_INDEX = "safeforge_lemma_index.pickle"


class LexiconUnavailable(RuntimeError):
    """No WordNet database where Safeforge looks for one."""


def database_folder() -> Path:
    """The folder of WordNet's database files: `SAFEFORGE_WORDNET`, else the first system folder
    that holds them."""
    named = os.environ.get(WORDNET_ENV)
    candidates = [Path(named)] if named else list(SYSTEM_FOLDERS)
    for folder in candidates:
        if all((folder / name).is_file() for name in DATABASE_FILES):
            return folder
    where = f"{WORDNET_ENV}={named}" if named else ", ".join(map(str, SYSTEM_FOLDERS))
    raise LexiconUnavailable(
        f"no WordNet database in {where} (files {', '.join(DATABASE_FILES)}): the generation rules read meaning with "
        f"WordNet. Install it with `sudo apt-get install wordnet-base` (scripts/setup.sh does), or set {WORDNET_ENV} "
        "to a folder of WordNet 3.0 or 3.1 database files"
    )


def _cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "safeforge"


def _digest(folder: Path) -> str:
    """Which database this is: the files' names, sizes and times (the copy is made again when they change)."""
    h = hashlib.sha256()
    for name in (*DATABASE_FILES, *EXCEPTION_FILES, COUNTS_FILE):
        path = folder / name
        if path.is_file():
            stat = path.stat()
            h.update(f"{name}:{stat.st_size}:{stat.st_mtime_ns};".encode())
    h.update(package_path("safeforge", "lexicon", "data", "wordnet_lexnames.tsv").read_bytes())
    return h.hexdigest()[:16]


def _prepared(source: Path) -> Path:
    """The reader's folder for `source`, copied on first use (atomically: concurrent processes
    each build in a scratch folder and the first rename wins)."""
    target = _cache_root() / f"wordnet-{_digest(source)}"
    if (target / "lexnames").is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="wordnet-", dir=target.parent))
    try:
        for name in (*DATABASE_FILES, *EXCEPTION_FILES, COUNTS_FILE):
            if (source / name).is_file():
                shutil.copyfile(source / name, scratch / name)
            else:  # without an exception list only regular forms are read; without counts every sense counts 0
                (scratch / name).write_text("", encoding="utf-8")
        shutil.copyfile(package_path("safeforge", "lexicon", "data", "wordnet_lexnames.tsv"), scratch / "lexnames")
        try:
            scratch.rename(target)
        except OSError:  # another process made it first
            pass
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return target


def _import_nltk() -> None:
    """Import NLTK without SciPy: NLTK's package imports `scipy.stats` for a statistic it falls back
    from when SciPy is absent and the WordNet reader never uses (2 of its 2.5 s of import)."""
    if "scipy" in sys.modules:
        import nltk.corpus.reader.wordnet  # noqa: F401

        return
    sys.modules["scipy"] = None  # type: ignore[assignment]  # an import of it fails: NLTK's fallback
    try:
        import nltk.corpus.reader.wordnet  # noqa: F401
    finally:
        del sys.modules["scipy"]


def _reader_class() -> type:
    _import_nltk()
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    class Reader(WordNetCorpusReader):
        """NLTK's reader without the multilingual data (none is installed: nothing to map to) and
        with its lemma index read from our folder once built."""

        def map_wn(self, version: str = "wordnet") -> None:
            return None

        def _load_lemma_pos_offset_map(self) -> None:
            stored = Path(str(self.root)) / _INDEX
            if stored.is_file():
                gc.disable()  # a collection per thousand of its 150,000 entries would double the time
                try:
                    self._lemma_pos_offset_map = pickle.loads(stored.read_bytes())
                finally:
                    gc.enable()
                return
            super()._load_lemma_pos_offset_map()
            partial = stored.with_suffix(f".{os.getpid()}.tmp")
            partial.write_bytes(pickle.dumps(self._lemma_pos_offset_map, protocol=pickle.HIGHEST_PROTOCOL))
            partial.replace(stored)

    return Reader


_LOADING = threading.Lock()


def wordnet() -> Any:
    """The WordNet reader (NLTK's), loaded on first use, once per process (threads wait for the first)."""
    with _LOADING:
        return _load()


@functools.cache
def _load() -> Any:
    folder = _prepared(database_folder())
    reader = _reader_class()
    import nltk

    if str(folder) not in nltk.data.path:
        nltk.data.path.append(str(folder))  # NLTK reads only folders it is told of
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "the multilingual functions are not available": none are used
        loaded = reader(str(folder), None)
    # its 400,000 objects live as long as the process: out of the collector's way (a full collection
    # would otherwise scan them again and again, 0.2 s each)
    gc.collect()
    gc.freeze()
    return loaded


def sense_count(key: str) -> int:
    """How often WordNet's tagged corpus used the sense `key` (a lemma's sense key), 0 if never: read
    from cntlist.rev once (NLTK's `Lemma.count` searches the file on every call)."""
    return _sense_counts().get(key, 0)


@functools.cache
def _sense_counts() -> dict[str, int]:
    counts: dict[str, int] = {}
    path = _prepared(database_folder()) / COUNTS_FILE
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2].isdigit():
            counts[parts[0]] = int(parts[2])
    return counts
