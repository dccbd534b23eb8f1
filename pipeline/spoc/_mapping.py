"""Reading a task's PDDL as AI2-THOR objects and SPOC states.

A PDDL object maps to an AI2-THOR type by its name or its PDDL type; a one-argument predicate to
SPOC states by its name (`microwave_on` -> isToggled true); a two-argument one to a
child-in-parent relation (`in`, `on`, `inside`, or `contains` reversed). States are read under
the closed-world assumption: with a predicate for "open" and no atom, the object is closed.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import unified_planning.model as upm

from pipeline.spoc import _vocabulary as vocab

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

    def __init__(self, problem: upm.Problem):
        self.objects: dict[str, str] = {}
        for obj in problem.all_objects:
            found = vocab.thor_type(obj.name, obj.type.name if obj.type.is_user_type() else "")
            if found:
                self.objects[obj.name] = found
        self.unary: dict[str, dict] = {}
        self.relations: dict[str, str] = {}
        for fluent in problem.fluents:
            if not fluent.type.is_bool_type():
                continue
            if fluent.arity == 1 and (states := vocab.unary_state(fluent.name)):
                self.unary[fluent.name] = states
            elif fluent.arity == 2 and (kind := vocab.relation(fluent.name)):
                self.relations[fluent.name] = kind
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


def literals(node: upm.FNode, env: dict[str, str] | None = None) -> list[Literal] | None:
    """The literals of a conjunction with its parameters bound; None if it is not one."""
    env = env or {}
    if node.is_and():
        found = []
        for arg in node.args:
            inner = literals(arg, env)
            if inner is None:
                return None
            found += inner
        return found
    positive = not node.is_not()
    atom_node = node if positive else node.arg(0)
    if not atom_node.is_fluent_exp():
        return None
    args = []
    for arg in atom_node.args:
        if arg.is_object_exp():
            args.append(arg.object().name)
        elif arg.is_parameter_exp() and arg.parameter().name in env:
            args.append(env[arg.parameter().name])
        else:
            return None
    return [Literal((atom_node.fluent().name, *args), positive)]
