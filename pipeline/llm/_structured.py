"""Structured output: how JSON is requested, how replies are validated, how they are repaired.

json_schema mode sends the pydantic model's JSON schema as `response_format`, with
`"strict": true` when the schema can take the form strict structured outputs require (every object
closed, every property required; keywords strict mode does not know are left out, pydantic still
checks them on the reply); json_object mode sends `{"type": "json_object"}` and describes the schema
in a system message placed after the caller's leading system messages.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ValidationError

from safeforge.common.excerpt import excerpt
from safeforge.common.jsonio import JSONRefused, check_nesting
from safeforge.common.limits import beyond, current_limits
from safeforge.llm._cache import canonical_json, sha256_hex

JsonMode = Literal["json_schema", "json_object"]
M = TypeVar("M", bound=BaseModel)

MAX_ERROR_CHARS = 2000
_JSON_POSITION = re.compile(r"at line (\d+) column (\d+)")
_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)
_SCHEMA_NAME_CHARS = re.compile(r"[^a-zA-Z0-9_-]")


class InvalidResponse(Exception):
    """A reply that is not a valid instance of the requested schema; `at` is the offset in the
    reply where it goes wrong, when known."""

    def __init__(self, message: str, at: int | None = None) -> None:
        super().__init__(message)
        self.at = at


@functools.cache
def _schema_json(schema: type[BaseModel]) -> str:
    """The JSON schema of a model, computed once per class (pydantic takes milliseconds)."""
    return json.dumps(schema.model_json_schema())


def json_schema(schema: type[BaseModel]) -> dict[str, Any]:
    """A fresh copy of the model's JSON schema."""
    return json.loads(_schema_json(schema))


@functools.cache
def schema_fingerprint(schema: type[BaseModel]) -> str:
    """`<Name>:<hash of its JSON schema>`, the schema's cache-key component."""
    return f"{schema.__name__}:{sha256_hex(canonical_json(json_schema(schema)))[:16]}"


STRICT_UNSUPPORTED = frozenset(
    {"minLength", "maxLength", "default", "minProperties", "maxProperties", "uniqueItems", "patternProperties", "contains"}
)
"""Keywords strict structured outputs reject; left out of a strict schema (pydantic checks them)."""


def strict_schema(schema: dict[str, Any]) -> dict[str, Any] | None:
    """`schema` as strict structured outputs accept it, or None when it cannot be (an object with
    optional properties or open keys)."""

    def convert(node: Any) -> Any:
        if isinstance(node, list):
            return [convert(item) for item in node]
        if not isinstance(node, dict):
            return node
        node = {("anyOf" if key == "oneOf" else key): convert(value) for key, value in node.items() if key not in STRICT_UNSUPPORTED}
        if node.get("type") == "object" or "properties" in node:
            if node.get("additionalProperties", False) is not False:
                raise ValueError("open object")
            if set(node.get("required", [])) != set(node.get("properties", {})):
                raise ValueError("optional properties")
            node["additionalProperties"] = False
        return node

    try:
        return convert(schema)
    except ValueError:
        return None


def response_format(schema: type[BaseModel], mode: JsonMode) -> dict[str, Any]:
    """The request's response_format (a fresh copy)."""
    if mode == "json_object":
        return {"type": "json_object"}
    return json.loads(_json_schema_format(schema))


@functools.cache
def _json_schema_format(schema: type[BaseModel]) -> str:
    """response_format for json_schema mode as JSON, computed once per class."""
    body: dict[str, Any] = {"name": _SCHEMA_NAME_CHARS.sub("_", schema.__name__)[:64]}
    strict = strict_schema(json_schema(schema))
    if strict is None:
        body["schema"] = json_schema(schema)
    else:
        body.update(schema=strict, strict=True)
    return json.dumps({"type": "json_schema", "json_schema": body})


def messages_for(messages: list[dict[str, Any]], schema: type[BaseModel], mode: JsonMode) -> list[dict[str, Any]]:
    """The messages to send: unchanged in json_schema mode, plus the schema description in
    json_object mode."""
    if mode == "json_schema":
        return list(messages)
    leading_system = next((i for i, m in enumerate(messages) if m.get("role") != "system"), len(messages))
    instruction = {
        "role": "system",
        "content": "Reply with one JSON object, and nothing else, that conforms to this JSON Schema:\n"
        + json.dumps(json_schema(schema), indent=1),
    }
    return [*messages[:leading_system], instruction, *messages[leading_system:]]


def parse_reply(schema: type[M], text: str | None, finish_reason: str | None) -> M:
    """Validate a reply; raises InvalidResponse saying what is wrong (a reply beyond the
    `reply_chars` or `nesting` input limits is not parsed). A reply wrapped in one Markdown code
    fence is accepted."""
    if finish_reason == "length":
        raise InvalidResponse("the reply was cut off at the output token limit (finish_reason=length)")
    if not text or not text.strip():
        raise InvalidResponse("the reply was empty")
    if len(text) > current_limits().reply_chars:
        raise InvalidResponse(beyond("reply_chars", f"the reply is {len(text):,} characters"))
    stripped = text.strip()
    fenced = _FENCE.match(stripped)
    body = fenced.group(1) if fenced else stripped
    try:
        check_nesting(body)
        return schema.model_validate_json(body)
    except JSONRefused as exc:
        raise InvalidResponse(f"JSON {exc}") from None
    except ValidationError as exc:
        raise InvalidResponse(str(exc)[:MAX_ERROR_CHARS], _where(text, body, exc)) from None


def _where(text: str, body: str, error: ValidationError) -> int | None:
    """The offset in `text` where invalid JSON goes wrong ("... at line L column C"), if it says."""
    found = _JSON_POSITION.search(str(error.errors()[0].get("msg", ""))) if error.errors() else None
    if not found:
        return None
    line, column = int(found.group(1)), int(found.group(2))
    lines = body.split("\n")
    offset = sum(len(earlier) + 1 for earlier in lines[: line - 1]) + column - 1
    return text.find(body) + offset


def repair_turns(reply: str | None, problem: InvalidResponse) -> list[dict[str, Any]]:
    """The failed reply, never whole when long (an excerpt around the problem), and a user turn
    saying what is wrong and asking for a corrected one."""
    text = reply or ""
    shown = excerpt(text, problem.at)
    cut = "" if shown == text else f" (it has {len(text):,} characters: above is only the part around the problem)"
    return [
        {"role": "assistant", "content": shown},
        {
            "role": "user",
            "content": f"Your reply is not valid{cut}: {problem}\nReply again with only the complete, corrected JSON object.",
        },
    ]


def rejects_response_format(error_message: str) -> bool:
    """Whether a 400's message blames `response_format` / json_schema (endpoint lacks support)."""
    lowered = error_message.lower()
    return "response_format" in lowered or "json_schema" in lowered
