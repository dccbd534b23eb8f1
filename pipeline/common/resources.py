"""Files that ship inside the installed packages (prompts, templates, samples, replayed responses).

Everything the code reads at run time is package data, found through `importlib.resources`, so an
installed Safeforge works from any folder and needs nothing beside it. In the development install
(setuptools' strict editable mode) a package is a tree of links to the checkout; its data is then
read from the checkout itself, so that readers which refuse symbolic links (the sources) read it
as plain files, and a data file added since the install is found.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def package_path(package: str, *parts: str) -> Path:
    """The real path of a file or folder shipped inside `package` (installed as plain files)."""
    found = resources.files(package)
    path = Path(str(found))
    if isinstance(found, Path) and (init := path / "__init__.py").is_symlink():
        return init.resolve().parent.joinpath(*parts)  # the checkout's folder behind the link tree
    found = found.joinpath(*parts)
    path = Path(str(found))
    if not isinstance(found, Path) and not path.exists():
        raise FileNotFoundError(f"{package}/{'/'.join(parts)} is not installed as a plain file")
    return path
