"""Pieces every layer shares: the error base, package data, lazy re-exports.

- `SafeforgeError` (errors): the base of every error reported to a user.
- `package_path` (resources): files shipped inside the installed packages.
- `lazy_exports` (lazy): re-exports for package `__init__` modules that import nothing up front.
"""

from safeforge.common.errors import SafeforgeError
from safeforge.common.lazy import lazy_exports
from safeforge.common.resources import package_path

__all__ = ["SafeforgeError", "lazy_exports", "package_path"]
