"""`publish`: accepted tasks of some runs -> a release folder (and optionally the Hub).

Order of work: collect accepted tasks (ordered by task_id, then run), drop duplicates by
content hash (the first in that order stays), re-validate every task (all failures are
reported, and any failure refuses the release), then build the release in a temporary folder
next to `out`, push it when a repo is given, and rename it into place. On any failure the
temporary folder is removed, so no partial release is ever left behind.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from safeforge.common.concurrency import map_on_cpus
from safeforge.publishing import _hub
from safeforge.publishing._archive import write_archive
from safeforge.publishing._card import SHARE_ALIKE_SOURCES, render_card
from safeforge.publishing._collect import collect
from safeforge.publishing._content import Duplicate, deduplicate
from safeforge.publishing._dataset import task_row, write_parquet
from safeforge.publishing._errors import PublishError
from safeforge.publishing._plots import PLOTS_DIR, write_plots
from safeforge.publishing._privacy import pseudonym, public_metadata
from safeforge.publishing._revalidate import ReleasedTask, revalidate_or_reason
from safeforge.publishing._stats import ReleaseStats, release_stats
from safeforge.review import review_report
from safeforge.runs.ledger import RunStore
from safeforge.settings import Settings
from safeforge.task.files import TaskError, read_metadata

DEFAULT_LICENSE = "mit"
SHARE_ALIKE_LICENSE = "cc-by-sa-4.0"
RELEASE_JSON = "release.json"
_VERSION = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


@dataclass
class Release:
    """A finished release."""

    version: str
    path: Path
    tasks: list[str]  # task ids, in release order
    duplicates: list[Duplicate] = field(default_factory=list)
    stats: ReleaseStats | None = None
    hub_url: str | None = None
    warnings: list[str] = field(default_factory=list)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _release_json(
    folder: Path,
    version: str,
    license_id: str,
    repo_id: str | None,
    runs,
    stats: ReleaseStats,
    released: list[ReleasedTask],
    duplicates: list[Duplicate],
) -> None:
    files = {str(p.relative_to(folder)): _sha256(p) for p in sorted(folder.rglob("*")) if p.is_file()}
    body = {
        "version": version,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "license": license_id,
        "repo_id": repo_id,
        "runs": [run.to_dict() for run in runs],
        "stats": stats.to_dict(),
        "tasks": [
            {"task_id": r.accepted.task_id, "run": r.accepted.run, "record_id": r.accepted.record_id, "content_hash": r.content_hash}
            for r in released
        ],
        "duplicates": [
            {
                "task_id": d.task.task_id,
                "run": d.task.run,
                "duplicate_of": d.kept.task_id,
                "duplicate_of_run": d.kept.run,
                "content_hash": d.content_hash,
            }
            for d in duplicates
        ],
        "files": files,
    }
    (folder / RELEASE_JSON).write_text(json.dumps(body, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def _revalidate_all(kept, engine, time_limit, progress) -> list[ReleasedTask]:
    released, failures = [], []
    calls = [(accepted, digest, engine, time_limit) for accepted, digest in kept]
    for number, ((accepted, _), outcome) in enumerate(zip(kept, map_on_cpus(revalidate_or_reason, calls), strict=True), start=1):
        if isinstance(outcome, str):
            failures.append(outcome)
            progress(f"[{number}/{len(kept)}] {accepted.task_id}: FAILED")
        else:
            released.append(outcome)
            progress(f"[{number}/{len(kept)}] {accepted.task_id}: ok")
    if failures:
        raise PublishError(f"release refused: {len(failures)} task(s) failed re-validation:\n  " + "\n  ".join(failures))
    return released


def publish(
    runs: list[str | Path],
    version: str,
    out: str | Path | None = None,
    *,
    repo_id: str | None = None,
    license_id: str | None = None,
    allow_replay: bool = False,
    engine: str | None = None,
    time_limit: float = 60.0,
    progress: Callable[[str], None] = lambda message: None,
) -> Release:
    """Build release `version` from the accepted tasks of `runs` into `out` (default
    outputs/releases/<version>); with `repo_id`, also push it to the Hub (token: HF_TOKEN).

    The licence follows the sources (`release_license`); tasks generated from the replay server's
    hand-written responses are pushed to the Hub only with `allow_replay`, and the card says so."""
    if not _VERSION.fullmatch(version):
        raise PublishError(f"version {version!r}: use letters, digits, '.', '_' and '-' (e.g. v1.0.0)")
    out = Path(out) if out is not None else Settings.load().outputs / "releases" / version
    if out.exists():
        raise PublishError(f"{out} already exists: a released version is never overwritten")
    token = None
    if repo_id is not None:
        token = _hub.hub_token()
        if _hub.remote_version_exists(repo_id, version, token):
            raise PublishError(f"{repo_id}: version {version} is already published (tag exists)")

    accepted, summaries = collect(runs)
    if not accepted:
        raise PublishError("no accepted tasks in " + ", ".join(str(r) for r in runs))
    kept, duplicates = deduplicate(accepted)
    license_id = release_license({a.source for a, _ in kept}, license_id)
    replayed = [a.task_id for a, _ in kept if _endpoint(a.folder) == "replay"]
    if replayed and repo_id is not None and not allow_replay:
        raise PublishError(
            f"{len(replayed)} task(s) ({', '.join(replayed[:5])}{', ...' if len(replayed) > 5 else ''}) were generated "
            "from the replay server's hand-written responses, not a model's; they are not pushed to the Hub "
            "unless you pass --allow-replay (the card then says so)"
        )
    for duplicate in duplicates:
        progress(
            f"duplicate: {duplicate.task.task_id} (run {duplicate.task.run}) has the content of "
            f"{duplicate.kept.task_id} (run {duplicate.kept.run}); left out"
        )
    released = _revalidate_all(kept, engine, time_limit, progress)
    for task in released:  # nothing personal leaves: annotators by pseudonym
        task.task.metadata = public_metadata(task.task.metadata, salt=repo_id or "local")

    out.parent.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(prefix=f".{out.name}.building-", dir=out.parent))
    try:
        rows = [task_row(r) for r in released]
        stats = release_stats(rows, summaries, len(duplicates))
        write_parquet(rows, building)
        write_archive(released, building)
        written = write_plots(stats, building)
        review = review_report([RunStore(s.root) for s in summaries])  # every task the runs sent to review
        alias = functools.partial(pseudonym, salt=repo_id or "local")
        review_plot = review.write_plot(building / PLOTS_DIR / "agreement.png", alias)
        plots = [str(p.relative_to(building)) for p in [*written, *([review_plot] if review_plot else [])]]
        card = render_card(
            version=version,
            license_id=license_id,
            repo_id=repo_id,
            stats=stats,
            runs=[s.name for s in summaries],
            plots=plots,
            replayed=len(replayed),
            review_section=review.to_markdown(alias),
        )
        _hub.check_card(card)
        (building / "README.md").write_text(card, encoding="utf-8")
        _release_json(building, version, license_id, repo_id, summaries, stats, released, duplicates)
        hub_url = None
        if repo_id is not None and token is not None:
            progress(f"pushing to {repo_id} ...")
            hub_url = _hub.push_release(building, repo_id, version, token)
        os.rename(building, out)
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        raise
    warnings: list[str] = []
    return Release(version, out, [r.accepted.task_id for r in released], duplicates, stats, hub_url, warnings)


def _endpoint(folder: Path) -> str | None:
    """Where a task's LLM responses came from (an unreadable folder is left to re-validation)."""
    try:
        return read_metadata(folder).provenance.llm_endpoint
    except TaskError:
        return None


def release_license(sources: set[str], requested: str | None) -> str:
    """The release's licence: a share-alike source (NormBank) makes it CC BY-SA 4.0, and a requested
    licence that is not share-alike is then refused; otherwise the requested one, MIT by default."""
    share_alike = sorted(s for s in sources if s in SHARE_ALIKE_SOURCES)
    if not share_alike:
        return requested or DEFAULT_LICENSE
    if requested is None or requested.lower() == SHARE_ALIKE_LICENSE:
        return SHARE_ALIKE_LICENSE
    raise PublishError(
        f"tasks from {', '.join(share_alike)} are derived from share-alike data (CC BY-SA 4.0): the release must be "
        f"{SHARE_ALIKE_LICENSE}, not {requested} (leave out --license, or leave out those tasks)"
    )
