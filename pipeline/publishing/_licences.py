"""Licences: the identifiers the Hugging Face Hub accepts in a card (`hub_licenses.json`, the Hub's
list kept as data with its date), and the licence a release takes from the datasets its tasks are
derived from."""

from __future__ import annotations

import difflib
import functools
import json

from safeforge.common.resources import package_path
from safeforge.publishing._errors import PublishError
from safeforge.sources.registry import SOURCES

HUB_LICENSES = "hub_licenses.json"
DEFAULT_LICENSE = "mit"
SHARE_ALIKE_LICENSE = "cc-by-sa-4.0"
SHARE_ALIKE_SOURCES = tuple(name for name, spec in SOURCES.items() if spec.licence.share_alike)


@functools.cache
def hub_license_list() -> dict:
    """The Hub's list as stored: {"source", "as_of", "note", "licenses": [{"id", "name"}]}."""
    return json.loads(package_path("safeforge.publishing", HUB_LICENSES).read_text(encoding="utf-8"))


def hub_licenses() -> dict[str, str]:
    """Licence identifier -> its full name, for every identifier the Hub accepts."""
    return {entry["id"]: entry["name"] for entry in hub_license_list()["licenses"]}


def checked_license(requested: str) -> str:
    """`requested` as the Hub spells it; PublishError when the Hub does not know it (with the
    closest identifiers it does know) or when it is `other`, which needs a licence text and name
    that a release does not carry."""
    known = hub_licenses()
    wanted = requested.strip().lower()
    if wanted == "other":
        raise PublishError("--license other needs a licence file and name of its own: choose an identifier from the Hub's list")
    if wanted not in known:
        close = difflib.get_close_matches(wanted, list(known), n=3, cutoff=0.6)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        listing = hub_license_list()
        raise PublishError(
            f"licence {requested!r} is not an identifier the Hugging Face Hub accepts{hint}; the Hub's list "
            f"({listing['source']}, as of {listing['as_of']}) has {len(known)} identifiers, e.g. mit, apache-2.0, cc-by-4.0, cc-by-sa-4.0"
        )
    return wanted


def release_license(datasets: set[str], requested: str | None) -> str:
    """The release's licence: a share-alike source (NormBank) among the datasets the tasks are
    derived from makes it CC BY-SA 4.0 (a requested licence that is not is refused); otherwise the
    requested one, MIT by default. Any requested identifier must be one the Hub accepts."""
    license_id = checked_license(requested) if requested is not None else None
    share_alike = sorted(d for d in datasets if d in SHARE_ALIKE_SOURCES)
    if not share_alike:
        return license_id or DEFAULT_LICENSE
    if license_id in (None, SHARE_ALIKE_LICENSE):
        return SHARE_ALIKE_LICENSE
    raise PublishError(
        f"tasks derived from {', '.join(share_alike)} records are derived from share-alike data (CC BY-SA 4.0): the release must be "
        f"{SHARE_ALIKE_LICENSE}, not {license_id} (leave out --license, or leave out those tasks)"
    )
