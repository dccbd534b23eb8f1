"""Danger conditions in plain words, for reviewers: `(and (floor_wet ?to) (soup_is_hot ?p))` reads
"floor wet (to) and soup is hot (p)".

Predicates become their words with the arguments in brackets; variables lose their `?`;
`and`/`or`/`not`/`imply`/`exists`/`forall`, comparisons and arithmetic read as English. Anything
unexpected is shown as PDDL rather than dropped.
"""

from __future__ import annotations

from dataclasses import dataclass

from safeforge.pddl import sexpr

_COMPARISONS = {"=": "is", "<": "<", ">": ">", "<=": "≤", ">=": "≥"}
_ARITHMETIC = {"+", "-", "*", "/"}


@dataclass(frozen=True)
class DangerCondition:
    """One `(when <condition> (increase (danger) 1))` of an action, for display."""

    action: str
    parameters: tuple[tuple[str, str], ...]
    """(variable without `?`, type) of the action, in order."""
    condition: str
    """The condition as PDDL."""

    @property
    def signature(self) -> str:
        return f"{self.action}({', '.join(f'{name}: {kind}' for name, kind in self.parameters)})"

    @property
    def in_words(self) -> str:
        return condition_in_words(self.condition)


def condition_in_words(condition: str) -> str:
    """The condition as a sentence fragment; the PDDL itself when it cannot be read."""
    try:
        expressions = sexpr.parse(condition)
    except ValueError:
        return condition
    if len(expressions) != 1:
        return condition
    return _words(expressions[0], top=True)


def _term(token: sexpr.SExpr) -> str:
    if isinstance(token, str):
        return token[1:] if token.startswith("?") else token
    if token and isinstance(token[0], str) and token[0] in _ARITHMETIC and len(token) == 3:
        return f"{_term(token[1])} {token[0]} {_term(token[2])}"
    if token and isinstance(token[0], str):  # a numeric fluent: (weight ?b) -> weight(b)
        return f"{_name(token[0])}({', '.join(_term(t) for t in token[1:])})"
    return sexpr.to_text(token)


def _name(symbol: str) -> str:
    return symbol.replace("_", " ").replace("-", " ")


def _words(node: sexpr.SExpr, top: bool = False) -> str:
    if isinstance(node, str):
        return _name(node)
    if not node or not isinstance(node[0], str):
        return sexpr.to_text(node)
    head, args = node[0].lower(), node[1:]
    if head == "and" and args:
        text = " and ".join(_words(a) for a in args)
    elif head == "or" and args:
        text = "either " + " or ".join(_words(a) for a in args)
    elif head == "not" and len(args) == 1:
        return "not " + _words(args[0])
    elif head == "imply" and len(args) == 2:
        text = f"if {_words(args[0])} then {_words(args[1])}"
    elif head in ("exists", "forall") and len(args) == 2 and isinstance(args[0], list):
        bound = _typed_list(args[0])
        names = ", ".join(f"{kind} {name}" if kind else name for name, kind in bound)
        text = f"some {names} with {_words(args[1])}" if head == "exists" else f"every {names} has {_words(args[1])}"
    elif head in _COMPARISONS and len(args) == 2:
        return f"{_term(args[0])} {_COMPARISONS[head]} {_term(args[1])}"
    elif all(isinstance(a, str) for a in args):
        return _name(node[0]) + (f" ({', '.join(_term(a) for a in args)})" if args else "")
    else:
        return sexpr.to_text(node)
    return text if top else f"[{text}]"


def _typed_list(tokens: list) -> list[tuple[str, str]]:
    """`?a ?b - box ?c` -> [(a, box), (b, box), (c, "")]."""
    result: list[tuple[str, str]] = []
    pending: list[str] = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if token == "-" and index + 1 < len(tokens):
            kind = tokens[index + 1] if isinstance(tokens[index + 1], str) else sexpr.to_text(tokens[index + 1])
            result += [(name, kind) for name in pending]
            pending, index = [], index + 2
            continue
        if isinstance(token, str):
            pending.append(token[1:] if token.startswith("?") else token)
        index += 1
    return result + [(name, "") for name in pending]


def danger_conditions(described: list[str], safety_domain: str) -> list[DangerCondition]:
    """The metadata's `danger_conditions` ("action: (condition)") with each action's parameters
    read from the safety domain."""
    parameters = _action_parameters(safety_domain)
    found = []
    for entry in described:
        action, _, condition = entry.partition(":")
        action, condition = action.strip(), condition.strip()
        found.append(DangerCondition(action, tuple(parameters.get(action.lower(), ())), condition or entry))
    return found


def _action_parameters(domain_text: str) -> dict[str, list[tuple[str, str]]]:
    try:
        expressions = sexpr.parse(domain_text)
    except ValueError:
        return {}
    found: dict[str, list[tuple[str, str]]] = {}
    for define in expressions:
        for item in define if isinstance(define, list) else []:
            if isinstance(item, list) and len(item) > 1 and str(item[0]).lower() == ":action":
                for index, token in enumerate(item[:-1]):
                    if str(token).lower() == ":parameters" and isinstance(item[index + 1], list):
                        found[str(item[1]).lower()] = _typed_list(item[index + 1])
    return found
