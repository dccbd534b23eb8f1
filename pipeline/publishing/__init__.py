"""Publishing accepted tasks: a release folder (parquet + card + plots + task archive) and,
optionally, a push to the Hugging Face Hub (see README, "Publishing releases and SPOC files").

The Hub-compatible server for tests and offline use is `tests.doubles.hub_server`.
"""

from typing import TYPE_CHECKING

from safeforge.common.lazy import lazy_exports

if TYPE_CHECKING:  # the public names; at run time each loads on first use (lazy_exports reads this block)
    from ._archive import ARCHIVE
    from ._collect import AcceptedTask, RunSummary, collect
    from ._content import content_hash
    from ._dataset import DATA_FILE, features
    from ._errors import PublishError
    from ._release import DEFAULT_LICENSE, RELEASE_JSON, Release, publish

__getattr__, __dir__ = lazy_exports(__name__)
