"""Flows `review-push` and `review-pull`: a run's checked tasks to Label Studio, and the
reviewers' decisions back into its ledger (the library's `safeforge.review.push_run` / `safeforge.review.pull_run`);
with `formalizations=True`, the formalization review before code generation
(`push_formalizations` / `pull_formalizations`).

Label Studio is configured by LABEL_STUDIO_URL, LABEL_STUDIO_API_KEY, ... (`safeforge.review.ReviewConfig`).
Both flows publish the project's link and the run's summary as artifacts; the summary ends with the
review's state (agreement, each annotator's record, the adjudication queue, open disagreements),
and the formalization review's when the run has one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from prefect import flow, get_run_logger
from prefect.artifacts import create_link_artifact, create_markdown_artifact

from safeforge.flows.generate import artifact_key
from safeforge.review import (
    ANNOTATORS_PER_TASK,
    OVERLAP_SHARE,
    ReviewConfig,
    pull_formalizations,
    pull_run,
    push_formalizations,
    push_run,
    review_status,
)
from safeforge.runs.ledger import RunStore
from safeforge.runs.overview import is_run, list_runs, run_overview
from safeforge.settings import Settings


def run_folder(run_name: str | None) -> Path:
    """The folder of run `run_name` under the outputs folder; None: the run changed most recently."""
    if run_name is None:
        runs = list_runs(Settings.load().outputs)
        if not runs:
            raise ValueError(f"no runs in {Settings.load().outputs}: run a generate deployment first")
        return runs[0]
    folder = Settings.load().outputs / run_name
    if not is_run(folder):
        raise ValueError(f"no run {run_name!r} in {Settings.load().outputs} (expected {folder}/ledger.sqlite)")
    return folder


def project_url(base_url: str, project_id: int) -> str:
    return f"{base_url.rstrip('/')}/projects/{project_id}/data"


def run_summary(store: RunStore) -> str:
    """The run's summary artifact: its overview, then its review's state, and its formalization
    review's when the run has one."""
    reviews = [review_status(store)]
    formalizations = review_status(store, formalizations=True)
    if formalizations.total.reviewed or formalizations.total.undecided:
        reviews.append(formalizations)
    return "\n\n".join([run_overview(store.root).to_markdown(), *(status.to_markdown() for status in reviews)])


def _publish_summary(store: RunStore) -> None:
    create_markdown_artifact(
        key=artifact_key(store.name),
        markdown=run_summary(store),
        description=f"Safeforge run {store.name}: records per state, stages, cost, review",
    )


@flow(name="review-push", log_prints=True)
def review_push(
    run_name: str | None = None,
    annotators_per_task: Annotated[int, ANNOTATORS_PER_TASK.field()] | None = None,
    overlap_share: Annotated[float, OVERLAP_SHARE.field()] | None = None,
    adjudicators: list[str] | None = None,
    formalizations: bool = False,
    reimport_missing: bool = False,
    remove_duplicates: bool = False,
) -> dict:
    """Import the checked tasks of run `run_name` (default: the latest run) into its Label Studio
    project; their records move to in_review. The options are `safeforge review push`'s:
    `annotators_per_task`, `overlap_share` and `adjudicators` ([]: none) set how the run is reviewed;
    `reimport_missing` re-creates a deleted project and re-imports deleted tasks; `remove_duplicates`
    merges copies imported twice. With `formalizations`, the formalizations waiting for their review
    go to the run's formalization project."""
    store = RunStore(run_folder(run_name))
    push = push_formalizations if formalizations else push_run
    result = push(
        store,
        ReviewConfig.from_env(),
        annotators_per_task=annotators_per_task,
        overlap_share=overlap_share,
        adjudicators=adjudicators,
        reimport_missing=reimport_missing,
        remove_duplicates=remove_duplicates,
    )
    url = project_url(result.url, result.project_id)
    get_run_logger().info("%s\nreview at %s", result.summary(), url)
    create_link_artifact(
        key=f"{'formalizations' if formalizations else 'review'}-{artifact_key(store.name)}",
        link=url,
        link_text=result.project_title,
        description=f"Label Studio project of run {store.name}" + (" (formalization review)" if formalizations else ""),
    )
    _publish_summary(store)
    store.ledger.close()
    return {**result.to_dict(), "project_url": url}


@flow(name="review-pull", log_prints=True)
def review_pull(run_name: str | None = None, formalizations: bool = False) -> dict:
    """Record the reviewers' decisions of run `run_name` (default: the latest run): accepted or
    rejected_by_review, with corrections and agreement. With `formalizations`, the verdicts on the
    waiting formalizations: accepted ones are generated when the run is resumed."""
    store = RunStore(run_folder(run_name))
    result = (pull_formalizations if formalizations else pull_run)(store, ReviewConfig.from_env())
    get_run_logger().info("%s", result.summary())
    _publish_summary(store)
    store.ledger.close()
    return result.to_dict()
