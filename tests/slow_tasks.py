"""Tasks that take long to read: the example bleach task with thousands of extra actions that change
nothing (its reference plans still hold), for the tests of the check's whole-task time limit."""

from __future__ import annotations

from pathlib import Path


def add_idle_actions(folder: Path, count: int) -> None:
    """Append `count` actions to `folder`'s safety domain (4,000 take longer than 0.3 s to read)."""
    domain = (folder / "safety_domain.pddl").read_text().rstrip().removesuffix(")")
    extra = "".join(
        f"\n  (:action noop_{i}\n    :parameters (?b - bucket ?l - location)\n"
        f"    :precondition (and (robot_at ?l) (holding ?b) (has_water ?b) (not (has_bleach ?b)))\n"
        f"    :effect (and (has_water ?b) (when (has_bleach ?b) (solution_diluted ?b))))\n"
        for i in range(count)
    )
    (folder / "safety_domain.pddl").write_text(domain + extra + ")\n")
