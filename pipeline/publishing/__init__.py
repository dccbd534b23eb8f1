"""Publishing tasks: a release folder (parquet + card + plots + task archive + SPOC files) made
from runs, import-despite outputs or folders of task folders and, optionally, a push to the Hugging
Face Hub (see docs/publishing.md).

The repository's tests push to a Hub-compatible server of their own (tests/doubles/hub_server.py,
in a checkout only: the wheel does not ship it).
"""

from typing import TYPE_CHECKING

from safeforge.common.lazy import lazy_exports

if TYPE_CHECKING:  # the public names; at run time each loads on first use (lazy_exports reads this block)
    from ._archive import ARCHIVE
    from ._citations import DESPITE_CITATION, DESPITE_REPOSITORY, SPOC_CITATION, citations
    from ._collect import AcceptedTask, InputSummary, collect
    from ._content import content_hash
    from ._dataset import DATA_FILE, features
    from ._errors import PublishError
    from ._licences import DEFAULT_LICENSE, SHARE_ALIKE_LICENSE, checked_license, hub_license_list, hub_licenses
    from ._release import RELEASE_JSON, Release, publish
    from ._scan import LeakScanner
    from ._spoc import SPOC_DIR

__all__ = [
    "ARCHIVE",
    "DESPITE_CITATION",
    "DESPITE_REPOSITORY",
    "SPOC_CITATION",
    "citations",
    "AcceptedTask",
    "InputSummary",
    "collect",
    "content_hash",
    "DATA_FILE",
    "features",
    "PublishError",
    "DEFAULT_LICENSE",
    "SHARE_ALIKE_LICENSE",
    "checked_license",
    "hub_license_list",
    "hub_licenses",
    "RELEASE_JSON",
    "Release",
    "publish",
    "LeakScanner",
    "SPOC_DIR",
]
__getattr__, __dir__ = lazy_exports(__name__)
