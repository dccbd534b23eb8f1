"""Our own reader of the PDDL subset tasks use: a domain and a problem as plain data, fast.

Scoring a plan needs the declarations, the actions, `:init` and `:goal`, not Unified Planning's
full model (whose import alone costs most of a second, and whose initial state enumerates every
grounding). This reader takes the s-expressions of `safeforge.pddl.sexpr` and checks what the
subset allows: the requirements (an unknown or unsupported one is named), the sections, and the
shape of each declaration. Expressions stay s-expressions; the simulator compiles them and names
any undeclared predicate, function, object or parameter with its line.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from safeforge.common.limits import check_time
from safeforge.pddl.errors import PDDLError
from safeforge.pddl.sexpr import SExpr, SExprError, SList, Source, parse, parse_recovering, unbalanced

DANGER = "danger"  # the numeric fluent danger effects increase
SUPPORTED = {
    ":strips", ":typing", ":negative-preconditions", ":disjunctive-preconditions", ":equality",
    ":existential-preconditions", ":universal-preconditions", ":quantified-preconditions",
    ":conditional-effects", ":numeric-fluents", ":fluents", ":object-fluents", ":adl", ":action-costs",
}  # fmt: skip
DECLARATIONS = {":types", ":constants", ":predicates", ":functions", ":objects"}  # what the names used are checked against
UNSUPPORTED = {
    ":durative-actions", ":duration-inequalities", ":continuous-effects", ":derived-predicates",
    ":timed-initial-literals", ":preferences", ":constraints", ":time", ":processes", ":events",
}  # fmt: skip


@dataclass
class Action:
    name: str
    parameters: list[tuple[str, str]]  # (name without '?', type)
    precondition: SExpr | None
    effect: SExpr | None
    line: int


@dataclass
class PDDLTask:
    """A domain and its problem, as declared (names as written; look-ups by lower case)."""

    domain_file: str
    problem_file: str
    name: str
    parents: dict[str, str] = field(default_factory=dict)  # type -> parent type (lower case)
    objects: dict[str, str] = field(default_factory=dict)  # object or constant -> type (names as written)
    predicates: dict[str, list[str]] = field(default_factory=dict)  # name -> parameter types
    functions: dict[str, list[str]] = field(default_factory=dict)
    actions: dict[str, Action] = field(default_factory=dict)  # lower-case name -> action
    init: list[SExpr] = field(default_factory=list)
    goal: SExpr | None = None
    goal_line: int = 0

    def objects_of(self, type_name: str) -> list[str]:
        """The objects (and constants) of a type, subtypes included."""
        key = type_name.lower()
        return [name for name, declared in self.objects.items() if key in self._ancestors(declared)]

    def _ancestors(self, type_name: str) -> set[str]:
        found = {type_name, "object"}
        while (parent := self.parents.get(type_name)) is not None and parent not in found:
            found.add(parent)
            type_name = parent
        return found


def read_task(
    domain_source: Source, problem_source: Source, domain_file: str = "domain.pddl", problem_file: str = "problem.pddl"
) -> PDDLTask:
    """The task in two PDDL texts (or their `parse_file` expressions); PDDLError naming the file and
    line of the first problem."""
    domain = parse_file(domain_source, domain_file) if isinstance(domain_source, str) else domain_source
    problem = parse_file(problem_source, problem_file) if isinstance(problem_source, str) else problem_source
    return _read(domain, problem, domain_file, problem_file, None)[0]


@dataclass
class Reading:
    """A domain and problem read as far as they go: the task of the parts that read, every error
    found (in order of file and line), and whether every declaration read (so the names used in
    the parts that read can be checked against them)."""

    task: PDDLTask
    errors: list[PDDLError]
    declarations_read: bool


def read_all(domain_text: str, problem_text: str, domain_file: str = "domain.pddl", problem_file: str = "problem.pddl") -> Reading:
    """Every syntax and section error of two PDDL texts, not only the first: after an error in a
    section, reading goes on at the next section."""
    errors: list[PDDLError] = []
    dropped: set[str] = set()
    parsed = []
    for text, file in ((domain_text, domain_file), (problem_text, problem_file)):
        check_time(f"reading {file}")
        try:
            exprs = parse(text)
        except SExprError:  # unbalanced, or nested too deep
            exprs = None
        if exprs is not None and not _section_inside_section(exprs):
            parsed.append(exprs)
        else:  # read on at the next section (a ')' missing in one and too many in a later one balance)
            recovered = parse_recovering(text)
            errors += [PDDLError(file, e.message, e.line, e.column) for e in recovered.errors]
            dropped.update(recovered.dropped)
            parsed.append(recovered.expressions)
    task, failed = _read(parsed[0], parsed[1], domain_file, problem_file, errors, dropped)
    return Reading(task, in_place_order(errors, domain_file, problem_file), not failed & (DECLARATIONS | {"define"}))


def in_place_order(errors: list[PDDLError], domain_file: str, problem_file: str) -> list[PDDLError]:
    """`errors` in the order of their places: the domain's, then the problem's, each by line and column."""
    order = {domain_file: 0, problem_file: 1}
    return sorted(errors, key=lambda e: (order.get(e.file, 2), e.line or 0, e.column or 0))


def _read(
    domain_exprs: list[SExpr],
    problem_exprs: list[SExpr],
    domain_file: str,
    problem_file: str,
    errors: list[PDDLError] | None,
    dropped: frozenset[str] | set[str] = frozenset(),
) -> tuple[PDDLTask, set[str]]:
    """The task and the keywords of the sections that did not read (`dropped` by the parse, or
    failed here; "define": a file's head); the first error raised when `errors` is None, else each
    appended and the reading goes on."""
    failed = set(dropped)

    def attempt(keyword: str | None, read: Callable[[], object]) -> object:
        if errors is None:
            return read()
        try:
            return read()
        except PDDLError as exc:
            errors.append(exc)
            failed.add(keyword or "")
            return None

    domain = attempt("define", lambda: _define(domain_exprs, domain_file, "domain"))
    problem = attempt("define", lambda: _define(problem_exprs, problem_file, "problem"))
    task = PDDLTask(domain_file, problem_file, str(domain[1][1]) if isinstance(domain, SList) else "")
    for index, section in enumerate(domain[2:] if isinstance(domain, SList) else ()):
        if index % 256 == 0:
            check_time()
        attempt(_keyword(section), lambda: _domain_section(task, section))  # noqa: B023 - called at once
    if isinstance(problem, SList):
        if isinstance(domain, SList):
            attempt("define", lambda: _problem_header(task, problem))
        for section in problem[3:] if len(problem) > 2 and _keyword(problem[2]) == ":domain" else problem[2:]:
            attempt(_keyword(section), lambda: _problem_section(task, section))  # noqa: B023 - called at once
        if task.goal is None and ":goal" not in failed:
            attempt(":goal", lambda: _no_goal(problem_file, problem))
    return task, failed


def _section_inside_section(exprs: list[SExpr]) -> bool:
    """Whether a `(:keyword ...)` section opens inside another (a ')' missing there)."""
    sections = [section for define in exprs if isinstance(define, SList) for section in define[1:] if isinstance(section, SList)]
    pending = [item for section in sections for item in section]
    while pending:
        item = pending.pop()
        if isinstance(item, SList):
            if item and isinstance(item[0], str) and item[0].startswith(":"):
                return True
            pending.extend(item)
    return False


def _no_goal(file: str, problem: SList) -> None:
    raise PDDLError(file, "the problem has no :goal", problem.line)


def parse_file(text: str, file: str) -> list[SExpr]:
    """The s-expressions of the PDDL `text` of `file`; PDDLError naming the line where it does not parse."""
    check_time(f"reading {file}")
    try:
        return parse(text)
    except SExprError as exc:
        found = unbalanced(text)  # a missing ')' is placed where its group opens, not where the reader gave up
        if found is not None:
            raise PDDLError(file, found[1].split(": ", 1)[1], found[0]) from None
        raise PDDLError(file, exc.message, exc.line) from None


def _define(exprs: list[SExpr], file: str, kind: str) -> SList:
    defines = [e for e in exprs if isinstance(e, SList) and e and _word(e[0]) == "define"]
    if len(defines) != 1 or len(exprs) != 1:
        raise PDDLError(file, f"expected one (define ({kind} ...) ...)", _line(exprs[1] if len(exprs) > 1 else None))
    define = defines[0]
    head = define[1] if len(define) > 1 else None
    if not (isinstance(head, SList) and len(head) == 2 and _word(head[0]) == kind and isinstance(head[1], str)):
        raise PDDLError(file, f"expected ({kind} <name>) after define", define.line)
    return define


def _domain_section(task: PDDLTask, section: SExpr) -> None:
    file = task.domain_file
    if not isinstance(section, SList) or not section or not isinstance(section[0], str):
        raise PDDLError(file, f"expected a (:section ...), found {_show(section)}", _line(section))
    keyword = section[0].lower()
    if keyword == ":requirements":
        for flag in section[1:]:
            word = str(flag).lower()
            if word in UNSUPPORTED:
                raise PDDLError(
                    file,
                    f"requirement {flag} is not supported (tasks are classical: no time, derived predicates or constraints)",
                    section.line,
                )
            if word not in SUPPORTED:
                raise PDDLError(file, f"unknown requirement {flag}", section.line)
    elif keyword == ":types":
        for names, parent in typed(section[1:], file, section.line):
            for name in names:
                task.parents[name.lower()] = parent.lower()
    elif keyword == ":constants":
        for names, type_name in typed(section[1:], file, section.line):
            task.objects.update({name: type_name.lower() for name in names})
    elif keyword in (":predicates", ":functions"):
        table = task.predicates if keyword == ":predicates" else task.functions
        items = [i for i in section[1:] if not (keyword == ":functions" and i == "-" or _is_number_type(i))]
        for item in items:
            if not isinstance(item, SList) or not item or not isinstance(item[0], str):
                raise PDDLError(file, f"expected ({keyword[1:-1]} ?parameter ...), found {_show(item)}", section.line)
            table[item[0]] = [t.lower() for names, t in typed(item[1:], file, item.line) for _ in names]
    elif keyword == ":action":
        action = _action(section, file)
        task.actions[action.name.lower()] = action
    elif keyword in (":durative-action", ":derived", ":constraints", ":process", ":event"):
        raise PDDLError(file, f"{section[0]} is not supported (tasks are classical)", section.line)
    else:
        raise PDDLError(file, f"unknown domain section {section[0]}", section.line)


def _action(section: SList, file: str) -> Action:
    if len(section) < 2 or not isinstance(section[1], str):
        raise PDDLError(file, "an :action needs a name", section.line)
    parts: dict[str, SExpr] = {}
    index = 2
    while index < len(section):
        key = section[index]
        if not isinstance(key, str) or key.lower() not in (":parameters", ":precondition", ":effect"):
            raise PDDLError(
                file, f"action {section[1]}: expected :parameters, :precondition or :effect, found {_show(key)}", _line(key) or section.line
            )
        if index + 1 >= len(section):
            raise PDDLError(file, f"action {section[1]}: {key} has no value", section.line)
        parts[key.lower()] = section[index + 1]
        index += 2
    params = parts.get(":parameters", SList())
    if not isinstance(params, SList):
        raise PDDLError(file, f"action {section[1]}: :parameters must be a list", section.line)
    parameters = [(name.lstrip("?"), t.lower()) for names, t in typed(params, file, section.line) for name in names]
    for name, _ in parameters:
        if not name or f"?{name}" not in [str(p) for p in params]:
            raise PDDLError(file, f"action {section[1]}: parameter {name!r} must start with '?'", section.line)
    empty = lambda e: isinstance(e, SList) and not e  # noqa: E731 - `()` is an empty precondition or effect
    precondition, effect = parts.get(":precondition"), parts.get(":effect")
    return Action(section[1], parameters, None if empty(precondition) else precondition, None if empty(effect) else effect, section.line)


def _problem_header(task: PDDLTask, problem: SList) -> None:
    if len(problem) < 3 or _keyword(problem[2]) != ":domain":
        raise PDDLError(task.problem_file, "expected (:domain <name>) after the problem's name", problem.line)
    named = problem[2][1] if len(problem[2]) > 1 else ""
    if str(named).lower() != task.name.lower():
        raise PDDLError(task.problem_file, f"the problem is for domain {named!r}, the domain is {task.name!r}", problem[2].line)


def _problem_section(task: PDDLTask, section: SExpr) -> None:
    file = task.problem_file
    keyword = _keyword(section)
    if keyword is None or not isinstance(section, SList):
        raise PDDLError(file, f"expected a (:section ...), found {_show(section)}", _line(section))
    if keyword == ":objects":
        for names, type_name in typed(section[1:], file, section.line):
            for name in names:
                if name in task.objects:
                    raise PDDLError(file, f"object {name} is declared twice", section.line)
                task.objects[name] = type_name.lower()
    elif keyword == ":init":
        task.init = list(section[1:])
    elif keyword == ":goal":
        if len(section) != 2:
            raise PDDLError(file, ":goal takes one condition", section.line)
        task.goal, task.goal_line = section[1], section.line
    elif keyword in (":metric", ":requirements"):
        return
    elif keyword in (":constraints", ":timed-initial-literals"):
        raise PDDLError(file, f"{section[0]} is not supported (tasks are classical)", section.line)
    else:
        raise PDDLError(file, f"unknown problem section {section[0]}", section.line)


def typed(items, file: str, line: int) -> list[tuple[list[str], str]]:
    """`a b - t c` -> [([a, b], t), ([c], object)]; `(either ...)` types are refused."""
    groups: list[tuple[list[str], str]] = []
    pending: list[str] = []
    items = list(items)
    index = 0
    while index < len(items):
        item = items[index]
        if isinstance(item, SList):
            raise PDDLError(file, f"unexpected {_show(item)} in a typed list (either-types are not supported)", item.line or line)
        if item == "-":
            if index + 1 >= len(items) or not isinstance(items[index + 1], str):
                raise PDDLError(file, "'-' must be followed by a type name", line)
            groups.append((pending, items[index + 1]))
            pending, index = [], index + 2
            continue
        pending.append(item)
        index += 1
    if pending:
        groups.append((pending, "object"))
    return groups


def _is_number_type(item: SExpr) -> bool:
    return isinstance(item, str) and item.lower() == "number"


def _keyword(expr: SExpr) -> str | None:
    return expr[0].lower() if isinstance(expr, SList) and expr and isinstance(expr[0], str) else None


def _word(token: SExpr) -> str:
    return token.lower() if isinstance(token, str) else ""


def _line(expr: SExpr | None) -> int | None:
    return getattr(expr, "line", None) or None


def _show(expr: SExpr) -> str:
    from safeforge.pddl.sexpr import to_text

    text = to_text(expr)
    return text if len(text) <= 60 else text[:57] + "..."
