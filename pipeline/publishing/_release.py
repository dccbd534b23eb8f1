"""`publish`: the tasks of some folders (runs, import-despite outputs, folders of task folders)
-> a release folder (and optionally the Hub).

Order of work: collect the tasks (ordered by task_id, then folder), drop duplicates by content hash
(the first in that order stays), derive the licence from the datasets the tasks come from, refuse
a push of tasks not known to be a model's work without `allow_replay`, re-validate every task (all
failures are reported, and any failure refuses the release), make each task's metadata public
(annotators by pseudonym, replayed models marked) and refuse the release if any string would carry
a machine path or an e-mail address, then build the release in a temporary folder next to `out`,
check every built file the same way, push it when a repo is given, and rename it into place. On any
failure the temporary folder is removed, so no partial release is ever left behind.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from safeforge.common.concurrency import map_on_cpus
from safeforge.common.limits import CHECK_TIME_LIMIT_S
from safeforge.publishing import _hub
from safeforge.publishing._archive import write_archive
from safeforge.publishing._card import render_card
from safeforge.publishing._collect import AcceptedTask, InputSummary, collect
from safeforge.publishing._content import Duplicate, deduplicate
from safeforge.publishing._dataset import task_row, write_parquet
from safeforge.publishing._errors import PublishError
from safeforge.publishing._licences import dataset_licence_rule, release_license
from safeforge.publishing._origin import REPLAY, UNKNOWN, marked_metadata
from safeforge.publishing._plots import PLOTS_DIR, write_plots
from safeforge.publishing._privacy import pseudonym, public_metadata
from safeforge.publishing._revalidate import ReleasedTask, revalidate_or_reason
from safeforge.publishing._scan import LeakScanner
from safeforge.publishing._spoc import SPOC_DIR, SpocFiles, write_spoc_files
from safeforge.publishing._stats import ReleaseStats, release_stats
from safeforge.review import review_report
from safeforge.runs import RunStore, release_distribution
from safeforge.runs.overview import is_run
from safeforge.settings import Settings
from safeforge.task.files import BASIC_DOMAIN, BASIC_PROBLEM, SAFETY_DOMAIN, SAFETY_PROBLEM

RELEASE_JSON = "release.json"
_VERSION = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_SHOWN_PROBLEMS = 20


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
    license: str = ""
    spoc_files: dict[str, str] = field(default_factory=dict)  # task_id -> file in spoc/


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _release_json(
    folder: Path,
    version: str,
    licence: tuple[str, list[str]],
    repo_id: str | None,
    inputs: list[InputSummary],
    stats: ReleaseStats,
    released: list[ReleasedTask],
    duplicates: list[Duplicate],
    datasets: set[str],
    spoc: SpocFiles,
) -> None:
    files = {p.relative_to(folder).as_posix(): _sha256(p) for p in sorted(folder.rglob("*")) if p.is_file()}
    body = {
        "version": version,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "license": licence[0],
        "licence_acknowledged": licence[1],
        "repo_id": repo_id,
        "datasets": sorted(datasets),
        "inputs": [summary.to_dict() for summary in inputs],
        "llm_endpoints": stats.counts["llm_endpoint"],
        "stats": stats.to_dict(),
        "spoc": {"folder": SPOC_DIR, "files": len(spoc.files), "not_exported": spoc.not_exported},
        "tasks": [
            {
                "task_id": r.accepted.task_id,
                "collection": r.accepted.collection,
                "record_id": r.accepted.record_id,
                "source": r.accepted.source,
                "made_by": r.accepted.origin.made_by,
                "llm_endpoint": r.accepted.origin.llm_endpoint,
                "content_hash": r.content_hash,
                "spoc_file": spoc.files.get(r.accepted.task_id),
            }
            for r in released
        ],
        "duplicates": [
            {
                "task_id": d.task.task_id,
                "collection": d.task.collection,
                "duplicate_of": d.kept.task_id,
                "duplicate_of_collection": d.kept.collection,
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


def _refuse_not_real(kept: list[AcceptedTask]) -> None:
    """PublishError for a push of tasks not known to be a model's work (without allow_replay)."""
    replayed = [a.task_id for a in kept if a.origin.llm_endpoint == REPLAY]
    unknown = [a.task_id for a in kept if a.origin.llm_endpoint == UNKNOWN]
    if not replayed and not unknown:
        return
    described = []
    for ids, what in (
        (replayed, "were generated from the replay server's hand-written responses, not a model's"),
        (unknown, "were generated by an LLM endpoint that was not recorded (possibly the replay server)"),
    ):
        if ids:
            described.append(f"{len(ids)} task(s) ({', '.join(ids[:5])}{', ...' if len(ids) > 5 else ''}) {what}")
    raise PublishError("; ".join(described) + ": they are not pushed to the Hub unless you pass --allow-replay (the card then says so)")


def _refuse(problems: list[str], what: str) -> None:
    if problems:
        shown = problems[:_SHOWN_PROBLEMS]
        more = f"\n  ... and {len(problems) - len(shown)} more" if len(problems) > len(shown) else ""
        raise PublishError(f"release refused: {len(problems)} {what}:\n  " + "\n  ".join(shown) + more)


def _public(released: list[ReleasedTask], salt: str) -> None:
    """Each task's metadata as the release shows it; refused when any string would carry a machine
    path or an e-mail address (named by task and field)."""
    scanner, problems = LeakScanner(), []
    for task in released:
        accepted = task.accepted
        task.task.metadata = marked_metadata(public_metadata(task.task.metadata, salt), accepted.origin)
        texts = {
            SAFETY_DOMAIN: task.task.safety_domain,
            SAFETY_PROBLEM: task.task.safety_problem,
            BASIC_DOMAIN: task.basic_domain,
            BASIC_PROBLEM: task.basic_problem,
        }
        problems += scanner.task_problems(accepted.task_id, accepted.collection, json.loads(task.task.metadata.to_json()), texts)
    _refuse(problems, "machine path(s) or e-mail address(es) in the tasks (remove them from the task folders)")


def publish(
    folders: list[str | Path],
    version: str,
    out: str | Path | None = None,
    *,
    repo_id: str | None = None,
    license_id: str | None = None,
    licence_acknowledged: Sequence[str] = (),
    allow_replay: bool = False,
    engine: str | None = None,
    time_limit: float = CHECK_TIME_LIMIT_S,
    progress: Callable[[str], None] = lambda message: None,
) -> Release:
    """Build release `version` from the tasks of `folders` (runs: their accepted tasks; import-despite
    outputs: the tasks imported cleanly; folders of task folders: every task) into `out` (default
    outputs/releases/<version>); with `repo_id`, also push it to the Hub (token: HF_TOKEN).

    The licence follows the datasets the tasks are derived from (`release_license`; a dataset whose
    licence is uncertain must be in `licence_acknowledged`); tasks not known
    to be a model's work (replayed, or their endpoint unknown) are pushed to the Hub only with
    `allow_replay`, and the card says so."""
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

    with ExitStack() as opened:  # each run's store, opened once
        runs = {path: opened.enter_context(RunStore(path)) for path in map(Path, folders) if is_run(path)}
        accepted, inputs = collect(folders, runs)
        for summary in inputs:
            for task_id, why in summary.left_out.items():
                progress(f"left out: {task_id} ({summary.kind} {summary.name!r}): {why}")
        if not accepted:
            raise PublishError("no tasks to release in " + ", ".join(str(f) for f in folders))
        kept, duplicates = deduplicate(accepted)
        datasets = set().union(*(a.origin.datasets for a, _ in kept))
        license_id = release_license(datasets, license_id, licence_acknowledged)
        acknowledged = sorted(d for d in datasets if dataset_licence_rule(d).uncertain)
        if repo_id is not None and not allow_replay:
            _refuse_not_real([a for a, _ in kept])
        for duplicate in duplicates:
            progress(
                f"duplicate: {duplicate.task.task_id} ({duplicate.task.collection}) has the content of "
                f"{duplicate.kept.task_id} ({duplicate.kept.collection}); left out"
            )
        released = _revalidate_all(kept, engine, time_limit, progress)
        _public(released, salt=repo_id or "local")
        not_real = sum(r.accepted.origin.not_real for r in released)

        out.parent.mkdir(parents=True, exist_ok=True)
        building = Path(tempfile.mkdtemp(prefix=f".{out.name}.building-", dir=out.parent))
        try:
            rows = [task_row(r) for r in released]
            stats = release_stats(rows, inputs, len(duplicates))
            write_parquet(rows, building)
            write_archive(released, building)
            spoc = write_spoc_files(building, progress)
            written = write_plots(stats, building)
            reviewed = sum(1 for r in released if r.task.metadata.review is not None and r.task.metadata.review.decision == "accepted")
            review = review_report(runs.values())  # every task the runs sent to review
            alias = functools.partial(pseudonym, salt=repo_id or "local")
            review_plot = review.write_plot(building / PLOTS_DIR / "agreement.png", alias)
            plots = [p.relative_to(building).as_posix() for p in [*written, *([review_plot] if review_plot else [])]]
            card = render_card(
                version=version,
                license_id=license_id,
                repo_id=repo_id,
                stats=stats,
                inputs=inputs,
                plots=plots,
                datasets=datasets,
                acknowledged=acknowledged,
                reviewed=reviewed,
                spoc=spoc,
                distribution=release_distribution(
                    [(r.task.path, r.task.metadata) for r in released],
                    runs.values(),
                    stats.llm_cost_usd,
                ),
                review_section=review.to_markdown(alias),
            )
            _hub.check_card(card)
            (building / "README.md").write_text(card, encoding="utf-8")
            _release_json(building, version, (license_id, acknowledged), repo_id, inputs, stats, released, duplicates, datasets, spoc)
            _refuse(LeakScanner().folder_problems(building), "machine path(s) or e-mail address(es) in the built files")
            hub_url = None
            if repo_id is not None and token is not None:
                progress(f"pushing to {repo_id} ...")
                hub_url = _hub.push_release(building, repo_id, version, token)
            os.rename(building, out)
        except BaseException:
            shutil.rmtree(building, ignore_errors=True)
            raise
        warnings = _warnings(not_real, repo_id)
        return Release(version, out, [r.accepted.task_id for r in released], duplicates, stats, hub_url, warnings, license_id, spoc.files)


def _warnings(not_real: int, repo_id: str | None) -> list[str]:
    """`not_real`: how many released tasks are not known to be a model's work."""
    if not not_real:
        return []
    where = "pushed with --allow-replay" if repo_id else "not pushed"
    return [f"{not_real} task(s) are not known to be a model's work (replayed, or their LLM endpoint unknown); the card says so ({where})"]
