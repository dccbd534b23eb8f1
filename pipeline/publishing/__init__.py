"""Publishing accepted tasks: a release folder (parquet + card + plots + task archive) and,
optionally, a push to the Hugging Face Hub (see README, "Publishing releases and SPOC files").

The Hub-compatible server for tests and offline use is `tests.doubles.hub_server`.
"""

from typing import TYPE_CHECKING

from pipeline.common.lazy import lazy_exports

if TYPE_CHECKING:  # the names below, for type checkers; at run time they load on first use
    from ._archive import ARCHIVE
    from ._collect import AcceptedTask, RunSummary, collect
    from ._content import content_hash
    from ._dataset import DATA_FILE, features
    from ._errors import PublishError
    from ._release import DEFAULT_LICENSE, RELEASE_JSON, Release, publish

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "ARCHIVE": "._archive",
        "AcceptedTask": "._collect",
        "RunSummary": "._collect",
        "collect": "._collect",
        "content_hash": "._content",
        "DATA_FILE": "._dataset",
        "features": "._dataset",
        "PublishError": "._errors",
        "DEFAULT_LICENSE": "._release",
        "RELEASE_JSON": "._release",
        "Release": "._release",
        "publish": "._release",
    },
)
