"""Licences: the identifiers the Hugging Face Hub accepts in a card (`hub_licenses.json`, the Hub's
list kept as data with its date), and the licence a release may take from the datasets its tasks are
derived from: one that every dataset's licence allows (`allowed_licences`), MIT by default.

- share-alike (NormBank, CC BY-SA 4.0): that licence only;
- MIT (ALFRED, BEHAVIOR-1K, DESPITE's own tasks) and other licences that ask for their notice: a
  licence under which the notice is kept (`NOTICE_KEEPING`);
- public domain (NEISS), CC0, and tasks written for the release: any;
- uncertain (VirtualHome) or unknown: only with the publisher's `acknowledged` name of the source,
  then by the rule of its licence today (the card says so).
"""

from __future__ import annotations

import difflib
import functools
import json
from collections.abc import Iterable
from dataclasses import dataclass

from safeforge.common.resources import package_path
from safeforge.publishing._citations import DESPITE, HANDWRITTEN, dataset_licence
from safeforge.publishing._errors import PublishError
from safeforge.sources.registry import SOURCES

HUB_LICENSES = "hub_licenses.json"
DEFAULT_LICENSE = "mit"
SHARE_ALIKE_LICENSE = "cc-by-sa-4.0"
NOTICE_KEEPING = ("mit", "apache-2.0", "bsd-2-clause", "bsd-3-clause", "cc-by-4.0", "cc-by-sa-4.0", "odc-by")
"""Hub licences under which an MIT (or BSD, Apache, CC BY) notice is kept with the work."""
_NOTICE = {"MIT", "APACHE-2.0", "BSD-2-CLAUSE", "BSD-3-CLAUSE", "CC-BY-4.0"}
_NO_CONDITIONS = {"CC0-1.0", "UNLICENSE"}


@dataclass(frozen=True)
class DatasetLicence:
    """What the licence of a dataset tasks are derived from allows a release."""

    dataset: str
    allows: tuple[str, ...] | None
    """Hub licence identifiers the release may take; None: any."""
    uncertain: bool = False
    """The release needs the publisher's acknowledgement (`--licence-acknowledged DATASET`)."""

    @property
    def allowed_text(self) -> str:
        return "any licence" if self.allows is None else ", ".join(self.allows)


def dataset_licence_rule(dataset: str) -> DatasetLicence:
    """The rule of the module docstring for one dataset (a source's name, `despite` or `handwritten`)."""
    if dataset == HANDWRITTEN:
        return DatasetLicence(dataset, None)
    if dataset == DESPITE:
        return DatasetLicence(dataset, NOTICE_KEEPING)
    spec = SOURCES.get(dataset)
    if spec is None:
        return DatasetLicence(dataset, None, uncertain=True)
    licence, spdx = spec.licence, spec.licence.spdx.upper()
    if licence.share_alike:
        return DatasetLicence(dataset, (spdx.lower(),), licence.uncertain)
    if licence.public_domain or spdx in _NO_CONDITIONS:
        return DatasetLicence(dataset, None, licence.uncertain)
    if spdx in _NOTICE:
        return DatasetLicence(dataset, NOTICE_KEEPING, licence.uncertain)
    return DatasetLicence(dataset, None, uncertain=True)


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


def release_license(datasets: set[str], requested: str | None, acknowledged: Iterable[str] = ()) -> str:
    """The release's licence: `requested` (an identifier the Hub accepts) when every dataset's rule
    allows it, else PublishError naming the datasets that do not; without a request MIT, or CC BY-SA
    4.0 when a dataset allows only that. A dataset whose licence is uncertain must be among
    `acknowledged`, and only such datasets may be."""
    acknowledged = {name.strip().lower() for name in acknowledged}
    uncertain_sources = sorted(name for name in SOURCES if dataset_licence_rule(name).uncertain)
    if wrong := sorted(acknowledged - set(uncertain_sources)):
        raise PublishError(
            f"--licence-acknowledged {', '.join(wrong)}: only a source whose licence is uncertain needs it "
            f"({', '.join(uncertain_sources) or 'none is'})"
        )
    rules = [dataset_licence_rule(d) for d in sorted(datasets)]
    if missing := [r.dataset for r in rules if r.uncertain and r.dataset not in acknowledged]:
        raise PublishError(
            "the licence of "
            + "; ".join(f"{d} ({dataset_licence(d)})" for d in missing)
            + " is uncertain: check that you may release tasks derived from its records, then say so with "
            + " ".join(f"--licence-acknowledged {d}" for d in missing)
            + " (the card records it), or leave out those tasks"
        )
    allowed = set(hub_licenses())
    for rule in rules:
        if rule.allows is not None:
            allowed &= set(rule.allows)
    if requested is not None:
        license_id = checked_license(requested)
        forbidding = [r for r in rules if r.allows is not None and license_id not in r.allows]
        if forbidding:
            raise PublishError(
                f"licence {license_id} contradicts the licence of the datasets the tasks are derived from: "
                + "; ".join(f"{r.dataset} ({dataset_licence(r.dataset)}) allows {r.allowed_text}" for r in forbidding)
                + (f"; every dataset allows {', '.join(sorted(allowed))}" if allowed else "")
                + " (leave out --license, or leave out those tasks)"
            )
        return license_id
    for default in (DEFAULT_LICENSE, SHARE_ALIKE_LICENSE):
        if default in allowed:
            return default
    if not allowed:
        raise PublishError(
            "no licence is allowed by every dataset the tasks are derived from: "
            + "; ".join(f"{r.dataset} allows {r.allowed_text}" for r in rules)
            + " (release those tasks apart)"
        )
    return sorted(allowed)[0]
