"""Reading a task's PDDL as AI2-THOR objects and SPOC states.

A PDDL object maps to an AI2-THOR type by its name or its PDDL type; a one-argument predicate to
SPOC states by its name (`microwave_on` -> isToggled true); a two-argument one to a
child-in-parent relation (`in`, `on`, `inside`, or `contains` reversed). States are read under
the closed-world assumption: with a predicate for "open" and no atom, the object is closed.
A state AI2-THOR sets through a control (a StoveKnob lights its StoveBurner) is read through it:
when no predicate of the task can hold it for one side (the knob typed so no "on" applies), that
side has the other's (the knob is on while the task's burner is), when the task has one of each.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from safeforge.pddl.reader import PDDLTask
from safeforge.pddl.sexpr import SExpr, SList
from safeforge.spoc import _vocabulary as vocab

Atom = tuple  # (predicate, object, ...)


@dataclass
class Snapshot:
    """SPOC-level state: per PDDL object its states, and the objects it is in or on."""

    states: dict[str, dict] = field(default_factory=dict)
    parents: dict[str, set] = field(default_factory=dict)


@dataclass
class Literal:
    atom: Atom
    positive: bool


class ThorView:
    """How one problem's objects and predicates read in AI2-THOR terms."""

    def __init__(self, task: PDDLTask):
        self.objects: dict[str, str] = {}
        for name, type_name in task.objects.items():
            found = vocab.thor_type(name, type_name)
            if found:
                self.objects[name] = found
        self.unary: dict[str, dict] = {}
        self.relations: dict[str, str] = {}
        for predicate, parameters in task.predicates.items():
            if len(parameters) == 1 and (states := vocab.unary_state(predicate)):
                self.unary[predicate] = states
            elif len(parameters) == 2 and (kind := vocab.relation(predicate)):
                self.relations[predicate] = kind
        settable = {
            obj: {
                key for name, states in self.unary.items() if obj in task.objects_of(task.predicates[name][0] or "object") for key in states
            }
            for obj in self.objects
        }
        self._through: dict[str, tuple[str, str]] = {}  # object -> (the object it reads the state from, the state)
        for controller, thor_type in self.objects.items():
            if (pair := vocab.controlled(thor_type)) is None:
                continue
            kind, key = pair
            sides = [o for o, t in self.objects.items() if t == thor_type], [o for o, t in self.objects.items() if t == kind]
            if len(sides[0]) == 1 and len(sides[1]) == 1:
                controlled = sides[1][0]
                if key not in settable[controller] and key in settable[controlled]:
                    self._through[controller] = (controlled, key)
                elif key not in settable[controlled] and key in settable[controller]:
                    self._through[controlled] = (controller, key)
        self._defaults: dict[str, bool] = {}
        for states in self.unary.values():
            for key, value in states.items():
                if isinstance(value, bool) and key != "sliced":
                    self._defaults[key] = self._defaults.get(key, True) and not value

    def spoc_type(self, obj: str, snapshot: Snapshot) -> str:
        base = self.objects[obj]
        if snapshot.states.get(obj, {}).get("sliced") and vocab.has(base, "sliceable"):
            return base + "Sliced"
        return base

    def snapshot(self, atoms) -> Snapshot:
        explicit: dict[str, dict] = defaultdict(dict)
        parents: dict[str, set] = {obj: set() for obj in self.objects}
        for name, *args in atoms:
            if name in self.unary and len(args) == 1 and args[0] in self.objects:
                explicit[args[0]].update(self.unary[name])
            elif name in self.relations and len(args) == 2 and all(a in self.objects for a in args):
                child, parent = args if self.relations[name] == "child_in_parent" else args[::-1]
                parents[child].add(parent)
        states = {obj: {**self._defaults, **explicit.get(obj, {})} for obj in self.objects}
        for obj, (source, key) in self._through.items():
            states[obj][key] = states[source][key]
        return Snapshot(states, parents)

    def facts(self, literal: Literal) -> list[tuple[str, str, object]] | None:
        """(object, state, value) facts a ground literal states; None when it has no SPOC meaning."""
        name, *args = literal.atom
        if not all(a in self.objects for a in args):
            return None
        if name in self.unary:
            states = self.unary[name]
            if not literal.positive and not all(isinstance(v, bool) for v in states.values()):
                return None
            return [(args[0], key, value if literal.positive else not value) for key, value in states.items()]
        if name in self.relations:
            child, parent = args if self.relations[name] == "child_in_parent" else args[::-1]
            return [(child, "parent" if literal.positive else "not_on", parent)]
        return None


def literals(node: SExpr | None, env: dict[str, str] | None = None) -> list[Literal] | None:
    """The literals of a conjunction (as the task's PDDL states it) with its parameters bound;
    None if it is not a conjunction of literals over objects and bound parameters."""
    env = env or {}
    if not isinstance(node, SList) or not node or not isinstance(node[0], str):
        return None
    head = node[0].lower()
    if head == "and":
        found = []
        for arg in node[1:]:
            inner = literals(arg, env)
            if inner is None:
                return None
            found += inner
        return found
    positive = head != "not"
    atom_node = node if positive else (node[1] if len(node) == 2 else None)
    if not isinstance(atom_node, SList) or not atom_node or not isinstance(atom_node[0], str):
        return None
    if atom_node[0].lower() in ("and", "or", "not", "imply", "exists", "forall", "=", "<", "<=", ">", ">="):
        return None
    args = []
    for arg in atom_node[1:]:
        if not isinstance(arg, str):
            return None
        if arg.startswith("?"):
            if arg[1:] not in env:
                return None
            args.append(env[arg[1:]])
        else:
            args.append(arg)
    return [Literal((str(atom_node[0]), *args), positive)]
