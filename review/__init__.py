"""Human review of checked tasks in Label Studio.

    push_run(store, config)   checked tasks -> the run's Label Studio project; records -> in_review
    pull_run(store, config)   annotations -> decisions (documented rule), corrections, agreement;
                              records -> accepted | rejected_by_review
    review_status(store)      pending / accepted / rejected, reasons and agreement by source
    start_server(...) / stop_server(handle)   a local server from .venv-labelstudio/

The server runs from its own virtual environment (scripts/setup_labelstudio.sh); the project
talks to it over HTTP with label-studio-sdk only.
"""
from review._agreement import Agreement, PairAgreement, agreement, cohen_kappa
from review._conditions import condition_in_words
from review._config import ReviewConfig
from review._demo import demo_run
from review._errors import NotFoundError, ReviewError
from review._plan_diff import DiffRow, diff_plans
from review._pull import Decision, PullResult, ReviewAnnotation, final_decision, pull_run
from review._push import PushResult, project_title, push_run
from review._server import (
    LABEL_STUDIO_VERSION,
    ServerError,
    ServerHandle,
    check_installation,
    running_server,
    start_server,
    stop_server,
)
from review._status import SourceStatus, Status, review_status
from review._task_data import CORRECTABLE_FIELDS, LABELING_CONFIG, REJECTION_REASONS, build_task

__all__ = [
    "Agreement", "CORRECTABLE_FIELDS", "Decision", "DiffRow", "LABELING_CONFIG", "LABEL_STUDIO_VERSION",
    "NotFoundError", "PairAgreement", "PullResult", "PushResult", "REJECTION_REASONS", "ReviewAnnotation",
    "ReviewConfig", "ReviewError", "ServerError", "ServerHandle", "SourceStatus", "Status", "agreement",
    "build_task", "check_installation", "cohen_kappa", "condition_in_words", "demo_run", "diff_plans",
    "final_decision", "project_title", "pull_run", "push_run", "review_status", "running_server",
    "start_server", "stop_server",
]
