"""`SafeforgeError`: the base of every error Safeforge reports to a user.

Each error's message says what is wrong and where (file, line or row, record), in one line a
person can act on. The command line catches this base in one place, prints the message and exits
with status 2; anything else is a bug and shows a traceback.
"""

from __future__ import annotations


class SafeforgeError(Exception):
    """An error with a message meant for the user (no traceback needed)."""

    exit_code = 2
