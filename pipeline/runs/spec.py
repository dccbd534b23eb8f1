"""`run.json`: what made a run, and the guard against resuming it with something else.

A run's spec is what changes its outputs: the stage settings (rounds, judge, planner, temperatures,
output caps), the model of each stage and the hash of each prompt template. Each invocation that
writes to the run adds what it ran with besides: its options, its executor, the code (Safeforge's
version and, from a git checkout, the revision) and the versions of the key dependencies.

Resuming a run whose spec differs is refused with every difference named, unless the caller
accepts the changes; the spec is then the new one, and the invocation lists what changed. A run
folder made before run.json existed gets one when it is resumed (its earlier spec is unknown).
"""

from __future__ import annotations

import datetime as dt
import functools
import importlib.metadata
import json
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from safeforge.common.errors import SafeforgeError, storage_errors
from safeforge.common.files import write_atomically
from safeforge.common.resources import package_path

RUN_SPEC = "run.json"
KEY_DEPENDENCIES = ("openai", "pydantic", "unified-planning", "up-fast-downward", "up-enhsp", "up-tamer", "prefect", "prefect-dask")
"""The distributions whose versions can change what a run makes or how it runs."""


class SpecChanged(SafeforgeError):
    """A run is resumed with a different spec (the message names each difference)."""


def code_version() -> dict[str, Any]:
    """Safeforge's version and, when it runs from a git checkout, the revision (and whether files
    differ from it)."""
    return {"safeforge": _version("safeforge"), **_git_revision()}


def dependency_versions() -> dict[str, str | None]:
    """The installed version of each key dependency (None: not installed)."""
    return {name: _version(name) for name in KEY_DEPENDENCIES}


def _version(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


@functools.cache
def _git_revision() -> dict[str, Any]:
    """The revision of the checkout Safeforge runs from (an editable install); none for an
    installed wheel, even one inside another repository's folder. A strict editable install's
    files are links into the checkout, followed to their folder."""
    folder = package_path("safeforge", "__init__.py").resolve().parent
    try:
        top = Path(_git(folder, "rev-parse", "--show-toplevel")).resolve()
        if folder != top / "pipeline":
            return {"git": None}
        revision = _git(top, "rev-parse", "HEAD")
        changed = bool(_git(top, "status", "--porcelain", "--untracked-files=no"))
    except (OSError, subprocess.SubprocessError):
        return {"git": None}
    return {"git": revision, "git_modified": changed}


def _git(folder: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True, timeout=10, check=True)
    return done.stdout.strip()


def differences(old: Mapping[str, Any], new: Mapping[str, Any], prefix: str = "") -> list[str]:
    """`section.key: old -> new` for every value that differs (nested mappings compared key by key)."""
    found = []
    for key in sorted(old.keys() | new.keys()):
        name = f"{prefix}{key}"
        before, after = old.get(key), new.get(key)
        if isinstance(before, Mapping) and isinstance(after, Mapping):
            found += differences(before, after, f"{name}.")
        elif before != after:
            found.append(f"{name}: {json.dumps(before)} -> {json.dumps(after)}")
    return found


def read_spec(root: Path) -> dict[str, Any] | None:
    """The run's run.json (None when it has none); SafeforgeError when it cannot be read."""
    path = Path(root) / RUN_SPEC
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    try:
        document = json.loads(text)
    except ValueError as exc:
        raise SafeforgeError(f"{path}: not valid JSON ({exc}); restore it or move it away") from None
    if not isinstance(document, dict) or not isinstance(document.get("spec"), dict):
        raise SafeforgeError(f'{path}: not a run spec (no "spec" object); restore it or move it away')
    return document


def record_spec(
    root: Path, spec: dict[str, Any], invocation: dict[str, Any], *, accept_changes: bool = False, has_records: bool = False
) -> dict[str, Any]:
    """Check `spec` against the run's run.json and record this invocation (write run.json);
    SpecChanged naming each difference unless `accept_changes`. `has_records`: the run already
    holds records (for a run without run.json: made before it existed). Returns the document written."""
    root = Path(root)
    document = read_spec(root)
    entry = {"at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), **invocation}
    if document is None:
        if has_records:
            entry["note"] = "run.json recorded when this run was resumed; what made its earlier records is unknown"
        document = {"run": root.name, "spec": spec, "invocations": [entry]}
    else:
        changes = differences(document["spec"], spec)
        if changes and not accept_changes:
            raise SpecChanged(
                f"run {root.name} was made with a different spec ({root / RUN_SPEC}): "
                + "; ".join(changes)
                + ". Use another run name, or accept the changes (--accept-changes; run.json records them)"
            )
        if changes:
            entry["changes"] = changes
        document = {**document, "spec": spec, "invocations": [*document.get("invocations", []), entry]}
    with storage_errors(root / RUN_SPEC):
        root.mkdir(parents=True, exist_ok=True)
        write_atomically(root / RUN_SPEC, json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    return document
