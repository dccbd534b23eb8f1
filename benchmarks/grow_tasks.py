"""Grown tasks for the check-scale benchmark: varied base tasks grown to 10, 30, 100 and 300 objects.

Bases (each kept as it is written or imported):
- `examples`: the hand-written example tasks (`examples/tasks`; classical, and numeric where a
  battery or other number remains besides danger);
- `scene`: the AI2-THOR-scene tasks (`examples/spoc`), grown with objects named after AI2-THOR
  object types, as a kitchen or bedroom of a real scene holds them;
- `despite`: DESPITE's demo tasks as `safeforge import-despite` imports them, from a DESPITE
  checkout given with `--despite` (its `demo_tasks/` folder); without one, the DESPITE-style tasks
  we wrote for the importer's tests (`tests/fixtures/despite`), imported the same way.

A base is grown to N objects (problem objects and domain constants together) by cloning problem
objects round-robin: a clone gets a copy of every static fact of its original (so a cloned place
has the original's neighbours, a cloned item its properties), of the dynamic facts in which the
original comes first (where an item is, what it is on) and of every numeric value; dynamic facts
that hold of one object only (where the robot is) are not copied. The goal and the actions are
unchanged, so a grown task keeps its base's plans and gains choices, places and decoys.

    .venv/bin/python benchmarks/grow_tasks.py OUT [--despite DIR] [--sizes 10,30,100,300]
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SIZES = (10, 30, 100, 300)
EXAMPLES = REPO / "examples" / "tasks"
SCENES = REPO / "examples" / "spoc"
DESPITE_STYLE = REPO / "tests" / "fixtures" / "despite"
SCENE_NAMES = {  # AI2-THOR object types, by the scene tasks' types
    "item": "apple bowl bread butter_knife cup dish_sponge egg fork kettle knife ladle lettuce mug pan pepper_shaker plate "
    "pot potato salt_shaker soap_bottle spatula spoon tomato wine_bottle book cell_phone credit_card key_chain pen pencil "
    "remote_control vase watch alarm_clock".split(),
    "receptacle": "counter_top dining_table drawer cabinet shelf side_table sink_basin stove_burner coffee_table "
    "garbage_can dresser desk sofa bed armchair".split(),
}


@dataclass(frozen=True)
class GrownTask:
    family: str  # examples | scene | despite
    base: str
    objects: int
    folder: Path
    numeric: bool  # numeric fluents besides danger


def _fact_parts(fact) -> tuple[str, list[str], str | None]:
    """(predicate or function, arguments, value) of an init fact (`value` only for `(= (f ...) v)`)."""
    if str(fact[0]) == "=":
        return str(fact[1][0]).lower(), [str(a) for a in fact[1][1:]], str(fact[2])
    return str(fact[0]).lower(), [str(a) for a in fact[1:]], None


def _changed(task) -> set[str]:
    """Predicates and functions some action changes (every other one is static)."""
    from safeforge.pddl.sexpr import SList

    changed: set[str] = set()

    def visit(node) -> None:
        if not isinstance(node, SList) or not node:
            return
        head = str(node[0]).lower()
        if head in ("and", "forall", "when", "not"):
            for part in node[2:] if head in ("when", "forall") else node[1:]:
                visit(part)
        elif head in ("assign", "increase", "decrease", "scale-up", "scale-down"):
            changed.add(str(node[1][0]).lower())
        else:
            changed.add(head)

    for action in task.actions.values():
        visit(action.effect)
    return changed


def _problem_objects(problem: str) -> list[str]:
    from safeforge.pddl.reader import typed
    from safeforge.pddl.sexpr import SList, parse

    for section in parse(problem)[0][1:]:
        if isinstance(section, SList) and section and str(section[0]).lower() == ":objects":
            return [name for names, _ in typed(section[1:], "problem.pddl", 0) for name in names]
    return []


def _fresh(stem: str, taken: set[str]) -> str:
    for number in itertools.count(1):
        name = f"{stem}_{number}"
        if name.lower() not in taken:
            taken.add(name.lower())
            return name
    raise AssertionError("unreachable")


def grow(domain: str, problem: str, target: int, names: dict[str, list[str]] | None = None) -> str | None:
    """`problem` with objects cloned until the task has `target` objects (None: it has as many
    already, or no object of its own to clone); a clone is named after `names[its type]` when
    given, after its original otherwise."""
    from safeforge.pddl.reader import read_task
    from safeforge.pddl.sexpr import SList

    task = read_task(domain, problem)
    originals = _problem_objects(problem) or list(task.objects)  # DESPITE's imports declare every object as a constant
    missing = target - len(task.objects)
    if missing <= 0 or not originals:
        return None
    changed = _changed(task)
    facts = [_fact_parts(f) for f in task.init if isinstance(f, SList) and f and str(f[0]).lower() != "not"]
    counts: dict[str, int] = {}
    for predicate, _, _ in facts:
        counts[predicate] = counts.get(predicate, 0) + 1
    taken = {name.lower() for name in task.objects}
    new_objects, new_facts = [], []
    for number in range(missing):
        original = originals[number % len(originals)]
        stems = (names or {}).get(task.objects[original], [original])
        clone = _fresh(stems[number // len(originals) % len(stems)], taken)
        new_objects.append(f"{clone} - {task.objects[original]}")
        for predicate, args, value in facts:
            if original not in args:
                continue
            if value is None and predicate in changed and (args[0] != original or (len(args) == 1 and counts[predicate] == 1)):
                continue  # a place's occupants stay where they are; what holds of one object only is not copied
            renamed = " ".join(clone if a == original else a for a in args)
            new_facts.append(f"(= ({predicate} {renamed}) {value})" if value is not None else f"({predicate} {renamed})")
    if not re.search(r"\(:objects", problem, flags=re.IGNORECASE):
        problem = re.sub(r"\(:init", "(:objects)\n (:init", problem, count=1, flags=re.IGNORECASE)
    problem = re.sub(r"\(:objects", "(:objects\n    " + "\n    ".join(new_objects), problem, count=1, flags=re.IGNORECASE)
    return re.sub(r"\(:init", "(:init\n    " + "\n    ".join(new_facts), problem, count=1, flags=re.IGNORECASE)


BATTERY_BASES = (
    "bathroom_bleach_bucket",
    "kitchen_mopped_floor_hot_soup",
    "spoc_fire_coffee_machine",
    "spoc_injury_cabinet_knife",
    "neiss_11125",
)


def with_battery(domain: str, problem: str) -> tuple[str, str]:
    """A numeric variant: every action needs and uses one unit of a battery of 100 (plans unchanged,
    numbers remain besides danger)."""
    from safeforge.pddl.sexpr import SList, Token, parse, to_text

    define = parse(domain)[0]
    for item in define:
        if isinstance(item, SList) and item and str(item[0]).lower() == ":functions":
            item.append(SList([Token("battery_level")]))
        if isinstance(item, SList) and item and str(item[0]).lower() == ":action":
            keys = [str(k).lower() for k in item]
            need, use = parse("(>= (battery_level) 1)")[0], parse("(decrease (battery_level) 1)")[0]
            for key, extra in ((":precondition", need), (":effect", use)):
                if key not in keys:
                    item.extend([Token(key), SList([Token("and"), extra])])
                    continue
                index = keys.index(key) + 1
                body = item[index]
                item[index] = SList(
                    [Token("and"), *(body[1:] if body and str(body[0]).lower() == "and" else [body] if body else []), extra]
                )
    problem = re.sub(r"\(:init", "(:init\n    (= (battery_level) 100)", problem, count=1, flags=re.IGNORECASE)
    return to_text(define), problem


def _write(folder: Path, base: Path, domain: str, problem: str, task_id: str) -> None:
    folder.mkdir(parents=True)
    (folder / "safety_domain.pddl").write_text(domain, encoding="utf-8")
    (folder / "safety_problem.pddl").write_text(problem, encoding="utf-8")
    metadata = json.loads((base / "metadata.json").read_text(encoding="utf-8"))
    for derived in ("reference_feasible_plans", "reference_plans", "danger_conditions", "context_predicates"):
        metadata.pop(derived, None)
    metadata["task_id"] = task_id
    (folder / "metadata.json").write_text(json.dumps(metadata, indent=2), encoding="utf-8")


def imported_despite(despite: Path | None, out: Path) -> list[Path]:
    """DESPITE's demo tasks (or our DESPITE-style fixtures) imported into `out`, as task folders."""
    from safeforge.despite_import import import_many

    sources = sorted((despite / "demo_tasks").iterdir()) if despite is not None else [
        DESPITE_STYLE / name for name in ("elderly_care_water_bottle", "kitchen_stove_child", "bathroom_wet_floor_mismatch")
    ]  # fmt: skip
    results = import_many(sources, out, jobs=2)
    return [Path(r.output) for r in results if r.output]


def build(out: Path, despite: Path | None = None, sizes: tuple[int, ...] = SIZES) -> list[GrownTask]:
    """Every base grown to every size in `sizes`, as task folders under `out` (which must not exist);
    also written to `out/tasks.json`."""
    from safeforge.pddl.reader import read_task

    out.mkdir(parents=True)
    with tempfile.TemporaryDirectory(prefix="despite-import-") as imported:
        bases: list = [("examples", p, None) for p in sorted(EXAMPLES.iterdir()) if p.is_dir()]
        bases += [("scene", p, SCENE_NAMES) for p in sorted(SCENES.iterdir()) if p.is_dir()]
        bases += [("despite", p, None) for p in imported_despite(despite, Path(imported))]
        bases += [(family, base, names, True) for family, base, names in bases if base.name in BATTERY_BASES]
        grown = []
        for family, base, names, *battery in bases:
            domain = (base / "safety_domain.pddl").read_text(encoding="utf-8")
            problem = (base / "safety_problem.pddl").read_text(encoding="utf-8")
            if battery:
                domain, problem = with_battery(domain, problem)
            task = read_task(domain, problem)
            numeric = any(name.lower() != "danger" for name in task.functions)
            for size in sizes:
                larger = grow(domain, problem, size, names)
                if larger is None and len(task.objects) != size:
                    continue  # the base has more objects than this size, or none to clone
                task_id = f"{base.name}{'_battery' if battery else ''}__{size}"
                folder = out / family / task_id
                _write(folder, base, domain, larger or problem, task_id)
                grown.append(GrownTask(family, base.name, size, folder, numeric))
    manifest = [{**t.__dict__, "folder": str(t.folder.relative_to(out))} for t in grown]
    (out / "tasks.json").write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    return grown


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="folder to create")
    parser.add_argument("--despite", type=Path, help="a DESPITE checkout (its demo_tasks/ are imported)")
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)), help="object counts (default 10,30,100,300)")
    parser.add_argument("--overwrite", action="store_true", help="replace OUT if it exists")
    args = parser.parse_args()
    if args.out.exists() and args.overwrite:
        shutil.rmtree(args.out)
    grown = build(args.out, args.despite, tuple(int(s) for s in args.sizes.split(",")))
    for family in ("examples", "scene", "despite"):
        ours = [t for t in grown if t.family == family]
        print(f"{family:9s} {len({t.base for t in ours})} bases, {len(ours)} tasks ({sum(t.numeric for t in ours)} numeric)")
    print(f"wrote {len(grown)} tasks under {args.out}")


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    main()
