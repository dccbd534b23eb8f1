"""Remove secrets (the API key) from any text before it is logged, stored or raised."""

from __future__ import annotations

from collections.abc import Iterable

REDACTED = "[REDACTED]"
MIN_SECRET_LENGTH = 4


class Redactor:
    """Replaces every occurrence of the given secrets with `[REDACTED]`."""

    def __init__(self, secrets: Iterable[str | None]):
        self._secrets = sorted({s for s in secrets if s and len(s) >= MIN_SECRET_LENGTH}, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, REDACTED)
        return text
