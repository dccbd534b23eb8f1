"""Reading and writing PDDL with Unified Planning, with errors that name file and line."""

from __future__ import annotations

import re
import warnings

import unified_planning.model as upm
from pyparsing import ParserElement
from unified_planning.environment import get_environment
from unified_planning.io import PDDLReader, PDDLWriter

from safeforge.common.limits import TimeLimitError
from safeforge.pddl.errors import PDDLError
from safeforge.pddl.sexpr import unbalanced

get_environment().credits_stream = None  # UP prints planner credits on every solve otherwise
warnings.filterwarnings("ignore", module=r"(unified_planning|up_\w+)(\..*)?")

_LINE_PATTERNS = (re.compile(r"\(line:(\d+), col:(\d+)\)"), re.compile(r"line:? (\d+), col (\d+)"))


def _error_line(exc: BaseException) -> int | None:
    lineno = getattr(exc, "lineno", None)
    if isinstance(lineno, int) and lineno > 0:
        return lineno
    for pattern in _LINE_PATTERNS:
        match = pattern.search(str(exc))
        if match:
            return int(match.group(1))
    return None


def _as_pddl_error(exc: BaseException, file: str) -> PDDLError:
    message = str(exc).strip() or type(exc).__name__
    return PDDLError(file=file, message=message.splitlines()[0], line=_error_line(exc))


def _reader() -> PDDLReader:
    """Unified Planning's PDDL reader, with pyparsing's packrat cache off: it reads twice as fast
    without it (the cache re-raises the same exceptions, whose growing tracebacks hold the parser's
    frames: long-lived cycles, and long passes of the garbage collector). Imports turn the cache
    on for every grammar (Unified Planning's ANML grammar, matplotlib's mathtext for the release
    cards), so it is turned off at each reading."""
    ParserElement.disable_memoization()
    return PDDLReader()


def parse_problem(
    domain_text: str,
    problem_text: str,
    domain_file: str = "domain.pddl",
    problem_file: str = "problem.pddl",
) -> upm.Problem:
    """Parse a domain and a problem; a failure names the file (and the line when UP tells).
    Unbalanced parentheses are reported where the unclosed group opens (`sexpr.unbalanced`)."""
    for text, file in ((domain_text, domain_file), (problem_text, problem_file)):
        found = unbalanced(text)
        if found is not None:
            line, message = found
            raise PDDLError(file=file, message=message.split(": ", 1)[1], line=line)
    try:
        return _reader().parse_problem_string(domain_text, problem_text)
    except TimeLimitError:  # the check's time passed while UP was reading
        raise
    except Exception as exc:  # UP raises pyparsing, SyntaxError and its own types
        failure = exc
    try:  # which file is at fault: the domain alone (parsed only when something failed)
        _reader().parse_problem_string(domain_text)
    except TimeLimitError:
        raise
    except Exception as exc:
        raise _as_pddl_error(exc, domain_file) from exc
    raise _as_pddl_error(failure, problem_file) from failure


def problem_view(problem: upm.Problem) -> tuple:
    """A problem as Unified Planning reads it (fluents, objects, actions, initial values, goals),
    order and names of domain and problem aside: equal views are the same problem."""
    return (
        sorted(str(f) for f in problem.fluents),
        sorted(str(o) for o in problem.all_objects),
        sorted(str(a) for a in problem.actions),
        sorted(f"{k} = {v}" for k, v in problem.explicit_initial_values.items()),
        sorted(str(g) for g in problem.goals),
    )


def write_problem(problem: upm.Problem) -> tuple[str, str]:
    """PDDL text (domain, problem) for `problem`, as Unified Planning's writer renders it."""
    writer = PDDLWriter(problem)
    return writer.get_domain(), writer.get_problem()


def expression_to_pddl(node: upm.FNode, binding: dict[str, str] | None = None) -> str:
    """Render an expression in PDDL syntax, substituting parameters from `binding`."""
    binding = binding or {}
    render = lambda n: expression_to_pddl(n, binding)  # noqa: E731
    if node.is_fluent_exp():
        args = " ".join(render(a) for a in node.args)
        return f"({node.fluent().name}{' ' + args if args else ''})"
    if node.is_parameter_exp():
        name = node.parameter().name
        return binding.get(name, f"?{name}")
    if node.is_variable_exp():
        name = node.variable().name
        return binding.get(name, f"?{name}")
    if node.is_object_exp():
        return node.object().name
    if node.is_bool_constant():
        return "true" if node.bool_constant_value() else "false"
    if node.is_int_constant() or node.is_real_constant():
        value = node.constant_value()
        return str(int(value)) if value == int(value) else str(float(value))
    if node.is_exists() or node.is_forall():
        head = "exists" if node.is_exists() else "forall"
        variables = " ".join(f"?{v.name} - {v.type}" for v in node.variables())
        return f"({head} ({variables}) {render(node.arg(0))})"
    operators = {
        "is_and": "and",
        "is_or": "or",
        "is_not": "not",
        "is_implies": "imply",
        "is_equals": "=",
        "is_le": "<=",
        "is_lt": "<",
        "is_plus": "+",
        "is_minus": "-",
        "is_times": "*",
        "is_div": "/",
        "is_iff": "iff",
    }
    for test, symbol in operators.items():
        if getattr(node, test)():
            return f"({symbol} {' '.join(render(a) for a in node.args)})"
    return str(node)
