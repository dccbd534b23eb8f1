"""The one error publishing raises: a release was refused, and why."""

from __future__ import annotations

from safeforge.common.errors import SafeforgeError


class PublishError(SafeforgeError):
    """A release that cannot be made; the message names the run, task or file at fault."""
