"""`safeforge sources list`, `sources show SOURCE [--path PATH] ...` and `sources fetch SOURCE`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from safeforge.common.printable import printable
from safeforge.common.ranges import RECORDS, SAMPLE, SEED
from safeforge.sources import SOURCES, ReadReport, UnknownSource, default_location, get_source, iter_records


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `sources` command group (list, show) to the safeforge parser."""
    group = subparsers.add_parser("sources", help="list the data sources, show their records, fetch their data")
    commands = group.add_subparsers(dest="sources_command", metavar="{list,show,fetch}", required=True)

    listing = commands.add_parser("list", help="the sources and what each expects on disk")
    listing.add_argument("--json", action="store_true", help="one JSON object per source")
    listing.set_defaults(func=run_list)

    show = commands.add_parser("show", help="read a source and print its records")
    show.add_argument("source", choices=sorted(SOURCES))
    show.add_argument("--path", help="file or folder to read (default: the full data once fetched, else the bundled sample)")
    show.add_argument("--json", action="store_true", help="one JSON object per record on stdout (summary still on stderr)")
    add_selection_arguments(show)
    show.set_defaults(func=run_show)

    fetch = commands.add_parser(
        "fetch",
        help="download a source's full public data (verified) into the data folder",
        description="Download, verify (sha256) and install a source's full data into SAFEFORGE_DATA/<source>/; "
        "an interrupted download resumes when the command runs again. Reading the source without "
        "--path then uses it instead of the bundled sample.",
    )
    fetch.add_argument("source", choices=sorted(SOURCES))
    fetch.add_argument(
        "--year",
        "--version",
        dest="keys",
        action="append",
        metavar="KEY",
        help="a year (neiss; repeatable) or version to fetch (default: the latest)",
    )
    fetch.add_argument(
        "--from", dest="from_file", type=Path, metavar="FILE", help="install a file downloaded by hand instead (verified the same way)"
    )
    fetch.add_argument("--catalog", type=Path, help="a JSON catalog of downloads to use instead of the built-in one")
    fetch.set_defaults(func=run_fetch)


def add_selection_arguments(parser: argparse.ArgumentParser) -> None:
    """--limit/--offset/--sample/--seed and the per-source filters (read back with `filters`)."""
    pick = parser.add_argument_group("selection (sample, then offset, then limit)")
    pick.add_argument("--limit", **RECORDS.argument("at most N records"))
    pick.add_argument("--offset", default=0, **RECORDS.argument("skip the first N records"))
    pick.add_argument("--sample", **SAMPLE.argument("a deterministic sample of N records"))
    pick.add_argument("--seed", default=0, **SEED.argument("seed of --sample (default 0)"))
    declared: set[str] = set()
    for spec in SOURCES.values():
        new = [option for option in spec.options if option.dest not in declared]  # a flag two sources share is added once
        if not new:
            continue
        group = parser.add_argument_group(f"{spec.name} options")
        for option in new:
            declared.add(option.dest)
            group.add_argument(
                option.flag,
                dest=option.dest,
                action="append" if option.repeat else "store",
                choices=option.choices or None,
                type=option.range.option() if option.range else str,
                help=option.described,
            )


IN_USE = {"full": "the full data (fetched)", "package": "the full data (installed package)", "sample": "the bundled sample"}


def run_list(args: argparse.Namespace) -> int:
    for spec in SOURCES.values():
        location = default_location(spec.name)
        fetchable = ", ".join(d.key for d in spec.downloads(None))
        if args.json:
            print(
                json.dumps(
                    {
                        "name": spec.name,
                        "title": spec.title,
                        "expects": spec.expects,
                        "homepage": spec.homepage,
                        "licence": spec.licence.name,
                        "options": [option.name for option in spec.options],
                        "in_use": location.kind,
                        "default_path": str(location.path),
                        "dataset": location.label,
                    }
                )
            )
            continue
        print(
            f"{spec.name}: {spec.title}\n  in use:    {IN_USE[location.kind]} ({location.label}) at "
            f"{location.path}\n  expects:   {spec.expects}\n  full data: {spec.homepage}; "
            f"`safeforge sources fetch {spec.name}` ({fetchable})\n  licence:   {spec.licence.name}"
        )
        if spec.options:
            print(f"  options:   {', '.join(option.flag for option in spec.options)}")
    return 0


def run_fetch(args: argparse.Namespace) -> int:
    from safeforge.sources.fetch import describe, fetch

    for result in fetch(args.source, args.keys, catalog=args.catalog, from_file=args.from_file):
        print(describe(result))
    location = default_location(args.source)
    print(f"{args.source} now reads {IN_USE[location.kind]} ({location.label}) by default")
    return 0


def filters(args: argparse.Namespace) -> dict:
    """The options of `args.source` given on the command line (as strings; the source's spec parses
    them); a usage error for an option of another source."""
    own = {option.dest: option.name for option in get_source(args.source).options}
    given = {}
    for spec in SOURCES.values():
        for option in spec.options:
            value = getattr(args, option.dest, None)
            if value is None:
                continue
            if option.dest not in own:
                raise UnknownSource(f"{option.flag} applies to {spec.name}, not {args.source}")
            given[own[option.dest]] = value
    return given


def run_show(args: argparse.Namespace) -> int:
    report = ReadReport()
    records = iter_records(
        args.source, args.path, report=report, limit=args.limit, offset=args.offset, sample=args.sample, seed=args.seed, **filters(args)
    )
    for record in records:
        if args.json:
            print(record.to_json())
        else:
            print(printable(f"== {record.record_id}  ({record.origin})\n{record.text}\n", keep="\n"))
    print(printable(f"{args.source}: {report.summary()}", keep="\n"), file=sys.stderr)
    return 0
