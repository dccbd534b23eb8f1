"""Human review of checked tasks in Label Studio.

    push_run(store, config)   checked tasks -> the run's Label Studio project; records -> in_review
    pull_run(store, config)   annotations -> decisions (documented rule), corrections, agreement;
                              records -> accepted | rejected_by_review
    review_status(store)      pending / accepted / rejected, reasons and agreement by source
    start_server(...) / stop_server(handle)   a local server from .venv-labelstudio/

The server runs from its own virtual environment (scripts/setup_labelstudio.sh); the project
talks to it over HTTP with label-studio-sdk only. Names are imported from their modules on first use.
"""

from typing import TYPE_CHECKING

from safeforge.common.lazy import lazy_exports

if TYPE_CHECKING:  # the public names; at run time each loads on first use (lazy_exports reads this block)
    from ._agreement import Agreement, PairAgreement, agreement, cohen_kappa
    from ._conditions import condition_in_words
    from ._config import ReviewConfig
    from ._errors import NotFoundError, ReviewError
    from ._plan_diff import DiffRow, diff_plans
    from ._pull import Decision, PullResult, ReviewAnnotation, final_decision, pull_run
    from ._push import PushResult, project_title, push_run
    from ._server import (
        LABEL_STUDIO_VERSION,
        ServerError,
        ServerHandle,
        check_installation,
        running_server,
        start_server,
        stop_server,
    )
    from ._status import SourceStatus, Status, review_status
    from ._task_data import CORRECTABLE_FIELDS, LABELING_CONFIG, REJECTION_REASONS, build_task

__getattr__, __dir__ = lazy_exports(__name__)
