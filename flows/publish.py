"""Flow `publish`: the accepted tasks of some runs and the tasks of folders of task folders (e.g.
import-despite outputs) → a release folder (parquet, card, plots, task archive, SPOC files) and,
with `repo_id`, the Hugging Face Hub (the library's `safeforge.publishing.publish`, as `safeforge
publish`)."""

from __future__ import annotations

from pathlib import Path

from prefect import flow, get_run_logger
from prefect.artifacts import create_markdown_artifact

from safeforge.flows.review import run_folder
from safeforge.publishing import publish as publish_release
from safeforge.settings import Settings


@flow(name="publish", log_prints=True)
def publish(
    version: str,
    runs: list[str] | None = None,
    folders: list[str] | None = None,
    repo_id: str | None = None,
    license_id: str | None = None,
    licence_acknowledged: list[str] | None = None,
    allow_replay: bool = False,
) -> dict:
    """Build release `version` under `<outputs>/releases/<version>` from `runs` (names under the
    outputs folder) and `folders` (folders of task folders, absolute or under the outputs folder;
    with neither, the latest run); with `repo_id`, push it to the Hub (token: HF_TOKEN; endpoint:
    HF_ENDPOINT)."""
    logger = get_run_logger()
    sources: list[str | Path] = [*map(run_folder, runs or []), *map(task_folders, folders or [])]
    release = publish_release(
        sources or [run_folder(None)],
        version,
        Settings.load().outputs / "releases" / version,
        repo_id=repo_id,
        license_id=license_id,
        licence_acknowledged=licence_acknowledged or [],
        allow_replay=allow_replay,
        progress=logger.info,
    )
    lines = [
        f"# Release {release.version}",
        "",
        f"{len(release.tasks)} task(s) ({release.license}), {len(release.spoc_files)} SPOC file(s), in `{release.path}`",
    ]
    if release.hub_url:
        lines.append(f"on the Hub: {release.hub_url}")
    lines += [f"- warning: {w}" for w in release.warnings]
    create_markdown_artifact(
        key=f"release-{version.lower().replace('.', '-').replace('_', '-')}",
        markdown="\n".join(lines) + "\n",
        description=f"Safeforge release {version}",
    )
    return {
        "version": release.version,
        "path": str(release.path),
        "tasks": release.tasks,
        "license": release.license,
        "spoc_files": release.spoc_files,
        "hub_url": release.hub_url,
        "warnings": release.warnings,
    }


def task_folders(path: str) -> Path:
    """A folder of task folders the flow was given: as it is when absolute, else under the outputs folder."""
    folder = Path(path) if Path(path).is_absolute() else Settings.load().outputs / path
    if not folder.is_dir():
        raise ValueError(f"no folder of tasks {path!r} (looked for {folder})")
    return folder
