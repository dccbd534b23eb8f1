"""`SourceSpec`: everything the other stages need to know about a source, declared by the source's
own module (as `SPEC`) and collected by `safeforge.sources.registry`.

A spec says how to read the source and which options its reader takes (`SourceOption`s: the
command line's flags and the flow's `filters` are built from them), where its bundled sample and its full data live, how to fetch
the full data (`Download`s with pinned checksums where they are known), its licence (share-alike
or not) and citation, how many of its sample records the demo deployments use, and, for sources
recorded in AI2-THOR, how to find a record's scene.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from safeforge.common.ranges import Range
from safeforge.sources.errors import UnknownSource
from safeforge.sources.record import Record
from safeforge.sources.textio import text_encoding


@dataclass(frozen=True)
class Licence:
    """The licence of a source's records (and so of what is derived from them)."""

    spdx: str
    """An SPDX identifier, e.g. MIT, CC-BY-SA-4.0; `other` when none applies."""
    name: str
    """How the card names it, with its holder."""
    share_alike: bool = False
    """Derived data must carry the same licence."""
    public_domain: bool = False
    """No licence applies (e.g. a work of the US government): a release may take any licence."""
    uncertain: bool = False
    """The licence of the records used is not certain (`spdx` is today's): a release needs the
    publisher's explicit acknowledgement."""


@dataclass(frozen=True)
class Download:
    """One file of a source's full data, as `safeforge sources fetch` gets it."""

    key: str
    """What `fetch` calls it (a year for NEISS, else the dataset's version)."""
    url: str | None
    """Where it is published; None when it cannot be fetched automatically (see `note`)."""
    file: str
    """The file's name once downloaded."""
    sha256: str | None
    """The pinned checksum; None when it could not be pinned (it is recorded at the first download
    and every later download must match it)."""
    size: int | None = None
    unpack: str | None = None
    """Archive format to extract: zip, 7z or tar.gz; None keeps the file as it is."""
    note: str = ""


@dataclass(frozen=True)
class SourceOption:
    """One of a source's own options: a keyword of its `read`, a flag of the command line
    (`safeforge sources show` and `generate`) and a key of the flow's `filters`."""

    name: str
    """The keyword of `read` and the key in `filters`, e.g. `products`."""
    flag: str
    """The command-line flag, e.g. `--product`."""
    help: str
    type: Callable[[str], Any] = str
    """Turns one given value into what `read` takes (ValueError for a bad one)."""
    repeat: bool = False
    """A list: the flag may be given several times (the flow takes a list, or one value)."""
    choices: tuple[str, ...] = ()
    """The values allowed (none: any)."""
    range: Range | None = None
    """The numbers allowed, for a number (its `type` is then the range's)."""

    def __post_init__(self) -> None:
        if self.type in (int, float):
            raise TypeError(f"source option {self.flag} takes a number: give its range (range=Range(low, high))")

    @property
    def dest(self) -> str:
        """The flag as an identifier (`--min-age` -> `min_age`)."""
        return self.flag.lstrip("-").replace("-", "_")

    def parse(self, value: Any) -> Any:
        """`value` as `read` takes it (a list for a repeated option); UnknownSource says what is wrong."""
        values = list(value) if self.repeat and isinstance(value, list | tuple) else [value]
        parsed = [self._one(v) for v in values]
        return parsed if self.repeat else parsed[0]

    def _one(self, value: Any) -> Any:
        try:
            parsed = self.range.parse(value) if self.range else self.type(value)
        except (TypeError, ValueError) as exc:
            raise UnknownSource(f"{self.name} {value!r}: {exc}") from None
        if self.choices and parsed not in self.choices:
            raise UnknownSource(f"unknown {self.name} value {value!r} (use: {', '.join(self.choices)})")
        return parsed

    @property
    def described(self) -> str:
        """The help of the flag, with the range of a number."""
        return f"{self.help} ({self.range.describe()})" if self.range else self.help


ENCODING_OPTION = SourceOption(
    "encoding",
    "--encoding",
    "read the data with this encoding (e.g. cp1252, latin-1, utf-8) instead of the detected one (UTF-8, else cp1252)",
    type=text_encoding,
)
"""The --encoding of the table sources."""


@dataclass(frozen=True)
class SourceSpec:
    """What a source is called, what it expects on disk, where to get it, how to read it."""

    name: str
    title: str
    read: Callable[..., Iterator[Record]]
    """read(path, *, report, **filters) -> records."""
    expects: str
    """The layout of a path the reader accepts."""
    homepage: str
    licence: Licence
    citation: str
    """BibTeX of the dataset's paper."""
    sample: tuple[str, ...]
    """The bundled sample, as a path inside `samples_dir`, its first part the source's name."""
    full_data: str
    """Where the reader's path is inside `<data dir>/<name>/` once the full data is fetched."""
    downloads: Callable[[list[str] | None], list[Download]]
    """The downloads for the keys asked for (None: the default ones); UnknownSource names the valid keys."""
    options: tuple[SourceOption, ...] = ()
    """The reader's own options (filters and reading settings)."""
    demo_limit: int = 2
    """Records of the bundled sample the demo deployment reads (those the replayed responses script)."""
    installed_package: tuple[str, str] | None = None
    """(import name, folder inside it) of an installed package that carries the full data."""
    ai2thor_scene: Callable[[dict[str, Any]], str | None] | None = None
    """The AI2-THOR scene (`FloorPlanN`) of a record, from its metadata, for sources recorded there."""
    samples_dir: Path | None = None
    """Where `sample` is, for a source of another package (default: this package's `sources/samples/`)."""
    extras: dict[str, str] = field(default_factory=dict)
    """pip extras some downloads need, by unpack format (e.g. {"7z": "safeforge[alfred]"})."""

    def read_options(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """`given` (option name -> value, as the flow's `filters` or the command line give them)
        checked against the options and parsed; UnknownSource names an option the source does not take."""
        declared = {option.name: option for option in self.options}
        unknown = sorted(set(given) - set(declared))
        if unknown:
            takes = ", ".join(declared) or "none"
            raise UnknownSource(f"{self.name} has no option(s) {', '.join(unknown)} (it takes: {takes})")
        return {name: None if value is None else declared[name].parse(value) for name, value in given.items()}


def fixed_downloads(*downloads: Download) -> Callable[[list[str] | None], list[Download]]:
    """`SourceSpec.downloads` for a source with a fixed set of files."""

    def choose(keys: list[str] | None) -> list[Download]:
        if not keys:
            return list(downloads)
        known = {d.key: d for d in downloads}
        unknown = [k for k in keys if k not in known]
        if unknown:
            raise UnknownSource(f"unknown version(s) {', '.join(unknown)} (available: {', '.join(known)})")
        return [known[k] for k in keys]

    return choose
