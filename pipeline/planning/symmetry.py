"""Interchangeable objects, so that a search expands one of the actions that differ only by which
of them they use.

Two objects are interchangeable in a task when swapping them maps the initial state (facts and
numbers) onto itself and neither is named in the goal or in the domain's actions (the danger
conditions included): then the swap maps every plan to a plan of the same length, safe to safe
and unsafe to unsafe. Objects interchangeable with a first one form a class, and any permutation
within a class is such a symmetry.

In a state, members of a class whose changing facts and numbers are the same up to the swap are
still interchangeable (a member in a fact with another member of its class is left alone). Of the
applicable actions that differ only by such members, the search keeps the one whose arguments
take each group's members in order: the others lead to states symmetric to its successor, with
shortest continuations of the same length.
"""

from __future__ import annotations

from safeforge.pddl.sexpr import SExpr, SList
from safeforge.planning.grounding import GroundTask, SearchAction

_KEPT_ORBITS = 4096  # states of different member facts whose groups are kept


class Symmetry:
    """The classes of interchangeable objects of one task, and the per-state pruning they allow."""

    def __init__(self, task: GroundTask):
        self.task = task
        self.classes = _classes(task)
        self.member_class = {member: number for number, members in enumerate(self.classes) for member in members}
        self._class_members = [frozenset(members) for members in self.classes]
        self._mask = 0  # the atoms with a member in them
        self._entries: dict[int, list[tuple[str, tuple, bool]]] = {}  # bit -> (member, the atom less it, pinned)
        self._member_bits: dict[str, int] = {}  # member -> the atoms with it in them
        self._looked_at = 0  # the atoms looked at so far (grounding adds atoms as it goes)
        self._number_entries: dict[tuple, list[tuple[str, tuple]]] = {}
        self._orbits: dict[tuple, Orbits] = {}

    def __bool__(self) -> bool:
        return bool(self.classes)

    def orbits(self, bits: int, numbers: dict) -> Orbits:
        """The groups of members still interchangeable in this state; kept by the members' facts
        and numbers, which most states share."""
        if self._looked_at < len(self.task.atoms):
            self._look_at_new_atoms()
        extra = []
        if self.task.numeric:
            for key, value in numbers.items():
                entries = self._number_entries.get(key)
                if entries is None:
                    members = [part for part in key[1:] if part in self.member_class]
                    entries = self._number_entries[key] = [(m, tuple(None if part == m else part for part in key)) for m in members]
                extra += [(member, shape, value) for member, shape in entries]
        key = (bits & self._mask, tuple(extra))
        found = self._orbits.get(key)
        if found is None:
            if len(self._orbits) >= _KEPT_ORBITS:
                self._orbits.clear()
            found = self._orbits[key] = Orbits(self._groups(key[0], extra), self.member_class, self.task.arity)
        found.look_at(self._looked_at, self._member_bits)
        return found

    def _look_at_new_atoms(self) -> None:
        for position in range(self._looked_at, len(self.task.atoms)):
            atom = self.task.atoms[position]
            members = [a for a in atom[1:] if a in self.member_class]
            if members:
                pinned = len({self.member_class[m] for m in members}) < len(members)
                self._mask |= 1 << position
                for member in members:
                    self._member_bits[member] = self._member_bits.get(member, 0) | 1 << position
                self._entries[position] = [
                    (member, tuple(None if part == member else part for part in atom), pinned) for member in dict.fromkeys(members)
                ]
        self._looked_at = len(self.task.atoms)

    def _groups(self, bits: int, extra: list[tuple[str, tuple, float]]) -> list[tuple[str, ...]]:
        """The groups of this state's interchangeable members (each sorted, of two or more)."""
        profiles: dict[str, list] = {}  # the members in a changing fact or number
        pinned: set[str] = set()
        rest = bits
        while rest:
            low = rest & -rest
            rest ^= low
            for member, shape, is_pinned in self._entries[low.bit_length() - 1]:
                if is_pinned:
                    pinned.add(member)
                else:
                    profiles.setdefault(member, []).append(shape)
        for member, shape, value in extra:
            profiles.setdefault(member, []).append((shape, value))
        grouped: dict[tuple, list[str]] = {}
        for member, profile in profiles.items():
            if member not in pinned:
                grouped.setdefault((self.member_class[member], frozenset(profile)), []).append(member)
        for number, members in enumerate(self._class_members):  # the others: in no changing fact
            grouped.setdefault((number, frozenset()), []).extend(members - profiles.keys() - pinned)
        return [tuple(sorted(members)) for members in grouped.values() if len(members) > 1]


class Orbits:
    """The groups of interchangeable members in a state (member -> its group, in order), and which
    actions represent their orbits."""

    def __init__(self, groups: list[tuple[str, ...]], member_class: dict[str, int], arity: int):
        self.groups = {member: group for group in groups for member in group}
        self._member_class = member_class
        self._later = {member for group in groups for member in group[1:]}  # members not first in their group
        self._beyond = [member for group in groups for member in group[arity:]]  # members no kept action uses
        self.skipped = 0
        """The atoms with a member no kept action uses (an action of n parameters uses at most the
        first n of a group): the actions they trigger need no grounding."""
        self._atoms_seen = 0

    def look_at(self, atoms: int, member_bits: dict[str, int]) -> None:
        """Brings `skipped` up to the first `atoms` atoms (grounding adds atoms as it goes)."""
        if atoms != self._atoms_seen:
            self._atoms_seen = atoms
            skipped = 0
            for member in self._beyond:
                skipped |= member_bits.get(member, 0)
            self.skipped = skipped

    def __bool__(self) -> bool:
        return bool(self.groups)

    def keeps(self, action: SearchAction) -> bool:
        """Whether `action` is its orbit's representative: the members it uses from each group are
        the group's first ones, in order of use."""
        members = action.members
        if members is None:
            members = action.members = tuple(m for m in action.args if m in self._member_class)
        if len(members) < 2:
            return not members or members[0] not in self._later
        used: dict[tuple, list[str]] = {}
        for member in members:
            group = self.groups.get(member)
            if group is None:
                continue
            taken = used.setdefault(group, [])
            if member in taken:
                continue
            if group[len(taken)] != member:
                return False
            taken.append(member)
        return True


def _classes(task: GroundTask) -> list[tuple[str, ...]]:
    sim = task.sim
    named = set()
    for action in sim.actions.values():
        named |= _tokens(action.precondition) | _tokens(action.effect)
    named |= _tokens(sim.task.goal)
    objects = {name: type_name for name, type_name in sim.task.objects.items() if name.lower() not in named}
    facts: dict[str, list[tuple]] = {name: [] for name in objects}
    every = [("atom", atom) for atom in sim.initial.atoms] + [("number", key, value) for key, value in sim.initial.numbers.items()]
    for fact in every:
        for part in fact[1][1:]:
            if part in facts:
                facts[part].append(fact)
    by_signature: dict[tuple, list[str]] = {}
    for name, type_name in objects.items():
        signature = frozenset(_swap(fact, name, "*") for fact in facts[name])
        by_signature.setdefault((type_name, signature), []).append(name)
    present = set(every)
    classes = []
    for members in by_signature.values():
        first = members[0]
        verified = [first] + [m for m in members[1:] if _swaps_onto_itself(facts[first] + facts[m], first, m, present)]
        if len(verified) > 1:
            classes.append(tuple(verified))
    return classes


def _swaps_onto_itself(facts: list[tuple], one: str, other: str, present: set) -> bool:
    def swapped(fact: tuple) -> tuple:
        key = tuple(other if p == one else one if p == other else p for p in fact[1])
        return (fact[0], key, *fact[2:])

    return all(swapped(fact) in present for fact in facts)


def _swap(fact: tuple, name: str, placeholder: str) -> tuple:
    return (fact[0], tuple(placeholder if p == name else p for p in fact[1]), *fact[2:])


def _tokens(node: SExpr | None) -> set[str]:
    """Lower-case object-like words in an expression (not variables, not heads)."""
    if node is None:
        return set()
    if isinstance(node, str):
        return set() if node.startswith("?") else {node.lower()}
    found: set[str] = set()
    if isinstance(node, SList):
        for part in node[1:]:
            found |= _tokens(part)
    return found
