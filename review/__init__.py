"""Human review of checked tasks in Label Studio, for one reviewer or a team.

    push_run(store, config)   checked tasks -> the run's Label Studio project; records -> in_review;
                              annotators per task, the share of tasks they cover, named adjudicators
    pull_run(store, config)   votes -> decisions (documented rule), corrections, disagreements,
                              agreement; records -> accepted | rejected_by_review (or back to review)
    push_formalizations(store, config) / pull_formalizations(store, config)
                              the formalization review before code generation (records waiting in
                              awaiting_formalization_review), in a project of its own
    review_status(store)      pending / accepted / rejected, reasons, the adjudication queue,
                              disagreements and agreement, by source (formalizations=True: of the
                              formalization review)
    review_report(stores)     the review of several runs for a release card (agreement, disagreements)
    start_server(...) / stop_server(handle)   a local server from .venv-labelstudio/, on SQLite or
                              a local PostgreSQL

The server runs from its own virtual environment (scripts/setup_labelstudio.sh); the project
talks to it over HTTP with label-studio-sdk only. Names are imported from their modules on first use.
"""

from typing import TYPE_CHECKING

from safeforge.common.lazy import lazy_exports

if TYPE_CHECKING:  # the public names; at run time each loads on first use (lazy_exports reads this block)
    from ._agreement import (
        Agreement,
        AnnotatorAgreement,
        PairAgreement,
        TaskVotes,
        agreement,
        cohen_kappa,
        krippendorff_alpha,
    )
    from ._annotations import ReviewAnnotation
    from ._conditions import condition_in_words
    from ._config import ReviewConfig
    from ._decide import Decision, Outcome, ReviewRules, decide
    from ._errors import NotFoundError, ReviewError, ServerError
    from ._formalization_data import FORMALIZATION_CONFIG, FORMALIZATION_REJECTION_REASONS, build_formalization_task
    from ._formalizations import FormalizationPullResult, formalization_project_title, pull_formalizations, push_formalizations
    from ._plan_diff import DiffRow, diff_plans
    from ._plot import agreement_plot
    from ._pull import PullResult, pull_run
    from ._push import ANNOTATORS_PER_TASK, OVERLAP_SHARE, PushResult, check_overlap, project_title, push_run
    from ._release import ReviewReport, public_review, review_report
    from ._server import (
        DATABASES,
        LABEL_STUDIO_VERSION,
        ServerHandle,
        check_installation,
        prepare_postgres_template,
        running_server,
        start_server,
        stop_database,
        stop_server,
    )
    from ._status import SourceStatus, Status, review_status
    from ._task_data import CORRECTABLE_FIELDS, LABELING_CONFIG, REJECTION_REASONS, build_task

__all__ = [
    "Agreement",
    "AnnotatorAgreement",
    "PairAgreement",
    "TaskVotes",
    "agreement",
    "cohen_kappa",
    "krippendorff_alpha",
    "ReviewAnnotation",
    "condition_in_words",
    "ReviewConfig",
    "Decision",
    "Outcome",
    "ReviewRules",
    "decide",
    "NotFoundError",
    "ReviewError",
    "ServerError",
    "FORMALIZATION_CONFIG",
    "FORMALIZATION_REJECTION_REASONS",
    "build_formalization_task",
    "FormalizationPullResult",
    "formalization_project_title",
    "pull_formalizations",
    "push_formalizations",
    "DiffRow",
    "diff_plans",
    "agreement_plot",
    "PullResult",
    "pull_run",
    "ANNOTATORS_PER_TASK",
    "OVERLAP_SHARE",
    "PushResult",
    "check_overlap",
    "project_title",
    "push_run",
    "ReviewReport",
    "public_review",
    "review_report",
    "DATABASES",
    "LABEL_STUDIO_VERSION",
    "ServerHandle",
    "check_installation",
    "prepare_postgres_template",
    "running_server",
    "start_server",
    "stop_database",
    "stop_server",
    "SourceStatus",
    "Status",
    "review_status",
    "CORRECTABLE_FIELDS",
    "LABELING_CONFIG",
    "REJECTION_REASONS",
    "build_task",
]
__getattr__, __dir__ = lazy_exports(__name__)
