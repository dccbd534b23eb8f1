"""The errors review raises."""

from safeforge.common.errors import SafeforgeError


class ReviewError(SafeforgeError):
    """A review step that cannot go on; nothing was changed in the run. The message says what to do."""


class NotFoundError(ReviewError):
    """Label Studio answered 404: the project or task no longer exists there."""


class ServerError(SafeforgeError):
    """The server cannot be installed, started or stopped; the message says what to do."""
