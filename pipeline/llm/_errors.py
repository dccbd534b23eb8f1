"""The one error type the LLM layer raises, with a machine-readable reason."""

from __future__ import annotations

from typing import Literal

from safeforge.common.errors import SafeforgeError

ErrorReason = Literal[
    "rate_limit",  # 429 after the last attempt
    "server_error",  # 5xx after the last attempt
    "timeout",  # request timed out (or 408) after the last attempt
    "connection",  # endpoint unreachable after the last attempt
    "auth",  # 401 / 403: wrong or missing API key
    "bad_request",  # any other 4xx (unknown model, unsupported parameter, no replay entry...)
    "validation",  # the response still failed schema validation after the repair turn
    "context",  # the request is larger than the models' context: refused before it is sent
]


class LLMError(SafeforgeError):
    """A call that failed for good. `reason` says why; the message never contains the API key."""

    def __init__(self, reason: ErrorReason, message: str, *, attempts: int, status: int | None = None):
        super().__init__(f"{reason}: {message}")
        self.reason: ErrorReason = reason
        self.message = message
        self.attempts = attempts
        self.status = status
