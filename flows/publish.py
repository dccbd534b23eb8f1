"""Flow `publish`: the accepted tasks of some runs → a release folder (parquet, card, plots,
task archive, SPOC files) and, with `repo_id`, the Hugging Face Hub (the library's
`safeforge.publishing.publish`; import-despite outputs and folders of task folders are released
with `safeforge publish`)."""

from __future__ import annotations

from pathlib import Path

from prefect import flow, get_run_logger
from prefect.artifacts import create_markdown_artifact

from safeforge.flows.review import run_folder
from safeforge.publishing import publish as publish_release
from safeforge.settings import Settings


@flow(name="publish", log_prints=True)
def publish(
    version: str, runs: list[str] | None = None, repo_id: str | None = None, license_id: str | None = None, allow_replay: bool = False
) -> dict:
    """Build release `version` under `<outputs>/releases/<version>` from `runs` (default: the
    latest run); with `repo_id`, push it to the Hub (token: HF_TOKEN; endpoint: HF_ENDPOINT)."""
    logger = get_run_logger()
    folders: list[str | Path] = [run_folder(name) for name in runs] if runs else [run_folder(None)]
    release = publish_release(
        folders,
        version,
        Settings.load().outputs / "releases" / version,
        repo_id=repo_id,
        license_id=license_id,
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
