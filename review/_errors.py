"""The errors review raises."""


class ReviewError(Exception):
    """A review step that cannot go on; nothing was changed in the run. The message says what to do."""


class NotFoundError(ReviewError):
    """Label Studio answered 404: the project or task no longer exists there."""
