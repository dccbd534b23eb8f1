"""Publishing accepted tasks: a release folder (parquet + card + plots + task archive) and,
optionally, a push to the Hugging Face Hub (see README, "Publishing releases and SPOC files").

The Hub-compatible server for tests and offline use is `tests.doubles.hub_server`.
"""

from pipeline.publishing._archive import ARCHIVE
from pipeline.publishing._collect import AcceptedTask, RunSummary, collect
from pipeline.publishing._content import content_hash
from pipeline.publishing._dataset import DATA_FILE, features
from pipeline.publishing._errors import PublishError
from pipeline.publishing._release import DEFAULT_LICENSE, RELEASE_JSON, Release, publish

__all__ = [
    "ARCHIVE",
    "DATA_FILE",
    "DEFAULT_LICENSE",
    "RELEASE_JSON",
    "AcceptedTask",
    "PublishError",
    "Release",
    "RunSummary",
    "collect",
    "content_hash",
    "features",
    "publish",
]
