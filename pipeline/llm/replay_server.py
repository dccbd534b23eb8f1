"""An OpenAI-compatible server that replays hand-written responses (tests, offline demo).

Replayed responses are hand-written stand-ins for a model's replies, never a model's output.

Start it with `python -m safeforge.llm.replay_server --responses DIR [--port P]` (port 0 picks
a free one; the URL is printed) or, in tests, `with running_replay_server(DIR) as base_url:`.

Replay files: every *.json (a list of entries, or one entry) and *.jsonl (one entry per line)
file under DIR. An entry::

    {"match": {"contains": ["substring", ...], "assistant_turns": 1},
     "response": {"content": "... or a JSON object", "finish_reason": "stop"},
     "faults": ["429", "500", "timeout", "malformed_json", "truncated"]}

- match.contains: substrings that must all occur in the request's message contents (joined
  with newlines). match.assistant_turns (optional): how many assistant messages the request
  already holds, to tell round 1 (0) from the repair round (1) of a conversation.
- response.content: the reply text; a JSON object or array is serialised. finish_reason
  defaults to "stop".
- faults (optional): applied to the first len(faults) requests that match the entry, in
  order; later ones get the response. Kinds: "429" (Retry-After: --retry-after-s) or
  "429:<seconds>"; any other 4xx/5xx status such as "500" or "503"; "401" (its message echoes
  the bearer token, as some servers do); "timeout" (sleeps --timeout-sleep-s, then answers);
  "malformed_json" (prose around the content, not JSON); "truncated" (half the content,
  finish_reason "length").

Exactly one entry must match a request: none gives HTTP 404, several give 409, each with a
JSON error body naming the problem. With --no-json-schema a request asking for a json_schema
response_format gets a 400 (like endpoints without JSON-schema support).

Rate limits (--rpm, --tpm; off by default), as OpenAI's API keeps them: a bucket per limit holding a
minute's allowance, refilled continuously. A chat request takes one request and its usage's tokens
(prompt + completion, as reported); past either limit it gets a 429 at once (no latency) with
Retry-After (whole seconds), retry-after-ms and the x-ratelimit-* headers, which every chat reply
carries too (limit, remaining and reset, of requests and of tokens). The buckets refill on the
server's clock, which runs in real time unless frozen (start option frozen_clock=True, or POST
/admin/clock): tests then move it with {"advance": seconds}, so a Retry-After is exactly known.

Usage in responses: prompt_tokens = len(message text) // 4, completion_tokens = len(content)
// 4, prompt_tokens_details.cached_tokens = the prefix shared with the previous request, in
tokens, rounded down to 64 (an emulation of prefix caching).

Option answer_in_groups=N (tests of concurrency; 0 = off): a chat request is answered only once N
are in flight together (a cyclic barrier: N at a time), so a client that keeps N requests in flight
shows max_in_flight == N however slow the machine; a barrier not met in group_timeout_s breaks, and
from then on requests are answered at once (counted as `group_timeouts`).

Endpoints: POST /v1/chat/completions, GET /v1/models, GET /admin/stats (requests served,
in flight, max in flight, faults, response formats asked for, `delayed_replies`: chat replies
that waited the latency or a timeout fault's sleep before their answer, rate-limit refusals never
do; the size of each of the latest 10,000 chat requests' message text, in order, as
`request_chars`), POST /admin/reset (zero the stats and fault counters; the clock is kept), POST
/admin/faults ({"next": [kinds...]} for the next requests, and/or {"rate": 0.1, "kinds": ["429",
"500"], "seed": 0} for random faults), POST /admin/clock ({"frozen": true} stops the server's
clock, {"frozen": false} runs it again from where it stands, {"advance": seconds} moves it on;
answers {"frozen": ..., "seconds": its reading}), POST /admin/hold ({"hold": true} keeps every chat
request waiting, in flight, until {"hold": false}; a test orders events with it, never with time).
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import random
import sys
import threading
import time
import uuid
from collections import Counter, deque
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from safeforge.common.ranges import ANY_PORT, SECONDS, SEED, Range
from safeforge.llm._config import REPLAY_OWNER
from safeforge.llm._replay_files import (
    LoadedEntry,
    ReplayFormatError,
    check_fault,
    load_entries,
    message_text,
)
from safeforge.settings import Settings

logger = logging.getLogger("safeforge.llm.replay_server")

RATE_LIMIT = Range(0, 1e12, whole=False)

CHARS_PER_TOKEN = 4
CACHE_BLOCK_TOKENS = 64
LISTEN_BACKLOG = 1024
IDLE_CONNECTION_TIMEOUT_S = 60
SHUTDOWN_POLL_S = 0.05  # how quickly stop() takes effect
MAX_RECORDED_REQUESTS = 10_000  # sizes of the latest requests kept for /admin/stats


@dataclass(frozen=True)
class ReplayOptions:
    """Server behaviour besides the replay files."""

    latency_ms: float = 0.0
    """Delay before every answer."""
    json_schema: bool = True
    """False: answer 400 to a json_schema response_format."""
    timeout_sleep_s: float = 30.0
    """How long a "timeout" fault sleeps before answering (make it exceed the client's timeout)."""
    retry_after_s: float = 1.0
    """Retry-After of a bare "429" fault."""
    fault_rate: float = 0.0
    """Probability of a random fault (drawn from fault_kinds) on any matched request."""
    fault_kinds: tuple[str, ...] = ("429", "500")
    seed: int = 0
    """Seed of the random faults."""
    requests_per_minute: float = 0.0
    """Request rate limit (0 = none): past it, 429 with Retry-After."""
    tokens_per_minute: float = 0.0
    """Token rate limit (0 = none), charged with each reply's usage."""
    frozen_clock: bool = False
    """Start with the rate limits' clock frozen (it moves by POST /admin/clock only)."""
    answer_in_groups: int = 0
    """Answer chat requests only when this many are in flight together (0 = off)."""
    group_timeout_s: float = 10.0
    """How long a request waits for its group before the barrier breaks."""


DEFAULT_OPTIONS = ReplayOptions()


@dataclass(frozen=True)
class _Reply:
    status: int
    payload: dict[str, Any]
    headers: tuple[tuple[str, str], ...] = ()
    sleep_s: float = 0.0
    immediate: bool = False
    """Answered without the server's latency (a rate-limit refusal)."""


def _error(status: int, message: str, kind: str, **headers: str) -> _Reply:
    body = {"error": {"message": message, "type": kind, "param": None, "code": kind}}
    return _Reply(status, body, tuple(headers.items()))


def strict_schema_problem(schema: Any, where: str = "(root)") -> str | None:
    """What strict structured outputs would reject in `schema` (as the OpenAI API does), or None."""
    if isinstance(schema, list):
        return next((p for i, s in enumerate(schema) if (p := strict_schema_problem(s, f"{where}[{i}]"))), None)
    if not isinstance(schema, dict):
        return None
    for keyword in ("minLength", "maxLength", "default", "oneOf"):
        if keyword in schema:
            return f"in context={where}, '{keyword}' is not permitted"
    if schema.get("type") == "object" or "properties" in schema:
        if schema.get("additionalProperties") is not False:
            return f"in context={where}, 'additionalProperties' is required to be supplied and to be false"
        if set(schema.get("required", [])) != set(schema.get("properties", {})):
            return f"in context={where}, 'required' is required to be supplied and to be an array including every key in properties"
    return next((p for key, value in schema.items() if (p := strict_schema_problem(value, f"{where}.{key}"))), None)


def _shared_prefix_length(a: str, b: str) -> int:
    """Length of the common prefix, by bisection over slice comparisons (done in C: a request's
    text is kilobytes, compared character by character in Python it cost a millisecond)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


class _Clock:
    """The server's clock (seconds, monotonic): real time, unless frozen (used under the state's lock)."""

    def __init__(self, frozen: bool):
        self._offset = 0.0
        self._frozen_at: float | None = time.monotonic() if frozen else None

    def __call__(self) -> float:
        return self._frozen_at if self._frozen_at is not None else time.monotonic() + self._offset

    @property
    def frozen(self) -> bool:
        return self._frozen_at is not None

    def set_frozen(self, frozen: bool) -> None:
        if frozen and self._frozen_at is None:
            self._frozen_at = self()
        elif not frozen and self._frozen_at is not None:
            self._offset, self._frozen_at = self._frozen_at - time.monotonic(), None

    def advance(self, seconds: float) -> None:
        if self._frozen_at is not None:
            self._frozen_at += seconds
        else:
            self._offset += seconds


class _RateBucket:
    """A minute's allowance, refilled continuously (used under the state's lock)."""

    def __init__(self, per_minute: float, clock: _Clock):
        self.limit = per_minute
        self.level = per_minute
        self._clock = clock
        self._updated = clock()

    def refill(self) -> None:
        now = self._clock()
        self.level = min(self.limit, self.level + (now - self._updated) * self.limit / 60)
        self._updated = now

    def wait_s(self, amount: float) -> float:
        """Seconds until `amount` (at most the limit) is available; 0 = now."""
        return max(0.0, min(amount, self.limit) - self.level) * 60 / self.limit

    def headers(self, unit: str) -> dict[str, str]:
        reset_s = (self.limit - self.level) * 60 / self.limit
        return {
            f"x-ratelimit-limit-{unit}": f"{self.limit:g}",
            f"x-ratelimit-remaining-{unit}": str(max(0, int(self.level))),
            f"x-ratelimit-reset-{unit}": f"{reset_s:.3f}s",
        }


class _ReplayState:
    """Entries, fault counters and statistics, shared by the handler threads."""

    def __init__(self, entries: list[LoadedEntry], options: ReplayOptions):
        self.entries = entries
        self.options = options
        self.lock = threading.Lock()
        self.clock = _Clock(options.frozen_clock)
        self.released = threading.Event()  # cleared while /admin/hold holds the chat requests
        self.released.set()
        self.reset()

    def reset(self) -> None:
        with self.lock:
            self.matched = [0] * len(self.entries)
            self.requests = 0
            self.model_lists = 0
            self.in_flight = 0
            self.max_in_flight = 0
            self.unmatched = 0
            self.ambiguous = 0
            self.faults: Counter[str] = Counter()
            self.response_formats: Counter[str] = Counter()
            self.previous_prompt = ""
            self.request_chars: list[int] = []
            self.queued_faults: deque[str] = deque()
            self.fault_rate = self.options.fault_rate
            self.fault_kinds = self.options.fault_kinds
            self.rng = random.Random(self.options.seed)
            self.rate_limited = 0
            self.delayed_replies = 0
            self.group_timeouts = 0
            self.group = threading.Barrier(self.options.answer_in_groups) if self.options.answer_in_groups > 0 else None
            self.buckets = {
                unit: _RateBucket(limit, self.clock)
                for unit, limit in (("requests", self.options.requests_per_minute), ("tokens", self.options.tokens_per_minute))
                if limit
            }

    def stats(self) -> dict[str, Any]:
        with self.lock:
            return {
                "requests": self.requests,
                "model_lists": self.model_lists,
                "in_flight": self.in_flight,
                "max_in_flight": self.max_in_flight,
                "unmatched": self.unmatched,
                "ambiguous": self.ambiguous,
                "faults": dict(self.faults),
                "rate_limited": self.rate_limited,
                "delayed_replies": self.delayed_replies,
                "group_timeouts": self.group_timeouts,
                "response_formats": dict(self.response_formats),
                "served_by_entry": {e.source: n for e, n in zip(self.entries, self.matched, strict=False) if n},
                "request_chars": list(self.request_chars[-MAX_RECORDED_REQUESTS:]),
            }

    def set_faults(self, body: dict[str, Any]) -> None:
        with self.lock:
            self.queued_faults.extend(check_fault(str(f)) for f in body.get("next", []))
            if "rate" in body:
                self.fault_rate = float(body["rate"])
            if "kinds" in body:
                self.fault_kinds = tuple(check_fault(str(f)) for f in body["kinds"])
            if "seed" in body:
                self.rng = random.Random(int(body["seed"]))

    def set_clock(self, body: dict[str, Any]) -> dict[str, Any]:
        """POST /admin/clock: freeze, run or advance the clock; its state after."""
        frozen, advance = body.get("frozen"), float(body.get("advance", 0.0))
        if frozen is not None and not isinstance(frozen, bool):
            raise ValueError("`frozen` must be true or false")
        if not 0 <= advance < math.inf:  # also refuses NaN
            raise ValueError(f"the clock only moves forward: `advance` must be a finite number of seconds >= 0, not {advance!r}")
        with self.lock:
            for bucket in self.buckets.values():  # refilled up to now on the clock as it was
                bucket.refill()
            if frozen is not None:
                self.clock.set_frozen(frozen)
            self.clock.advance(advance)
            return {"frozen": self.clock.frozen, "seconds": self.clock()}

    def wait_for_group(self) -> None:
        """With answer_in_groups: wait until that many requests are in flight together."""
        group = self.group
        if group is None:
            return
        try:
            group.wait(self.options.group_timeout_s)
        except threading.BrokenBarrierError:
            with self.lock:
                self.group_timeouts += 1

    def delay(self, reply: _Reply) -> None:
        """Wait before sending `reply`: its own sleep, and the latency unless it is answered at once."""
        seconds = reply.sleep_s if reply.immediate else reply.sleep_s + self.options.latency_ms / 1000
        if seconds > 0:
            with self.lock:
                self.delayed_replies += 1
            time.sleep(seconds)

    @contextmanager
    def in_flight_request(self) -> Iterator[None]:
        with self.lock:
            self.requests += 1
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            yield
        finally:
            with self.lock:
                self.in_flight -= 1

    def _next_fault(self, index: int) -> str | None:
        """Called with the lock held, for the request that matched entry `index`."""
        served = self.matched[index]
        self.matched[index] += 1
        faults = self.entries[index].entry.faults
        if served < len(faults):
            return faults[served]
        if self.queued_faults:
            return self.queued_faults.popleft()
        if self.fault_rate and self.rng.random() < self.fault_rate:
            return self.rng.choice(self.fault_kinds)
        return None

    def chat_completion(self, body: dict[str, Any], authorization: str) -> _Reply:
        messages = body.get("messages")
        if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
            return _error(400, "`messages` must be a list of message objects", "invalid_request_error")
        requested_format = body.get("response_format")
        if not isinstance(requested_format, dict):
            requested_format = {}
        wanted_format = requested_format.get("type")
        strict = wanted_format == "json_schema" and (requested_format.get("json_schema") or {}).get("strict") is True
        with self.lock:
            self.response_formats[(wanted_format or "text") + (" strict" if strict else "")] += 1
        if wanted_format == "json_schema" and not self.options.json_schema:
            return _error(
                400,
                "response_format type 'json_schema' is not supported by this endpoint; use 'json_object'",
                "invalid_request_error",
            )
        if strict and (problem := strict_schema_problem(requested_format["json_schema"].get("schema"))):
            return _error(400, f"Invalid schema for response_format: {problem}", "invalid_request_error")
        text = "\n".join(message_text(m) for m in messages)
        assistant_turns = sum(m.get("role") == "assistant" for m in messages)
        with self.lock:
            self.request_chars.append(len(text))
            del self.request_chars[:-MAX_RECORDED_REQUESTS]
            matching = [i for i, e in enumerate(self.entries) if e.matches(text, assistant_turns)]
            if len(matching) != 1:
                return self._match_error(matching, messages, assistant_turns)
            tokens = len(text) // CHARS_PER_TOKEN + len(self.entries[matching[0]].entry.response.text) // CHARS_PER_TOKEN
            if refusal := self._take_allowance(tokens):
                return refusal
            limit_headers = self._limit_headers()
            fault = self._next_fault(matching[0])
            if fault:
                self.faults[fault] += 1
            prefix_chars = _shared_prefix_length(text, self.previous_prompt)
            self.previous_prompt = text
        if fault and fault[0].isdigit():
            return self._status_fault(fault, authorization)
        response = self.entries[matching[0]].entry.response
        content, finish_reason = response.text, response.finish_reason
        if fault == "malformed_json":
            content = f"Sure! Here is what you asked for: {content} Hope this helps."
        elif fault == "truncated":
            content, finish_reason = content[: len(content) // 2], "length"
        prompt_tokens = len(text) // CHARS_PER_TOKEN
        cached_tokens = min(prompt_tokens, prefix_chars // CHARS_PER_TOKEN // CACHE_BLOCK_TOKENS * CACHE_BLOCK_TOKENS)
        payload = _completion_body(str(body.get("model", "replay")), content, finish_reason, prompt_tokens, cached_tokens)
        return _Reply(200, payload, limit_headers, sleep_s=self.options.timeout_sleep_s if fault == "timeout" else 0.0)

    def _take_allowance(self, tokens: int) -> _Reply | None:
        """Called with the lock held: take one request and `tokens` from the buckets, or the 429
        that refuses them (answered at once, as real APIs do)."""
        needs = {"requests": 1, "tokens": tokens}
        for bucket in self.buckets.values():
            bucket.refill()
        wait_s = max((bucket.wait_s(needs[unit]) for unit, bucket in self.buckets.items()), default=0.0)
        if wait_s > 0:
            self.rate_limited += 1
            return replace(
                _error(
                    429,
                    f"Rate limit reached: retry after {wait_s:.3f}s",
                    "rate_limit_exceeded",
                    **{"Retry-After": str(math.ceil(wait_s)), "retry-after-ms": str(math.ceil(wait_s * 1000))},
                    **dict(self._limit_headers()),
                ),
                immediate=True,
            )
        for unit, bucket in self.buckets.items():
            bucket.level -= min(needs[unit], bucket.limit)
        return None

    def _limit_headers(self) -> tuple[tuple[str, str], ...]:
        return tuple(item for unit, bucket in self.buckets.items() for item in bucket.headers(unit).items())

    def _match_error(self, matching: list[int], messages: list[dict[str, Any]], assistant_turns: int) -> _Reply:
        """Called with the lock held."""
        if not matching:
            self.unmatched += 1
            last = message_text(messages[-1])[:300] if messages else ""
            return _error(
                404,
                f"no replay entry matches this request (assistant_turns={assistant_turns}); last message begins: {last!r}",
                "replay_no_match",
            )
        self.ambiguous += 1
        sources = ", ".join(self.entries[i].source for i in matching)
        return _error(
            409,
            f"{len(matching)} replay entries match this request ({sources}); make their `contains` (or `assistant_turns`) more specific",
            "replay_ambiguous_match",
        )

    def _status_fault(self, fault: str, authorization: str) -> _Reply:
        status_text, _, seconds = fault.partition(":")
        status = int(status_text)
        if status == 429:
            retry_after = seconds or f"{self.options.retry_after_s:g}"
            return _error(
                429,
                "Rate limit reached (replayed fault)",
                "rate_limit_exceeded",
                **{"Retry-After": retry_after},
            )
        if status == 401:  # echo the token, as some servers do, so tests can check it is scrubbed
            token = authorization.removeprefix("Bearer ")
            return _error(401, f"Incorrect API key provided: {token} (replayed fault)", "invalid_api_key")
        return _error(status, f"HTTP {status} (replayed fault)", "replayed_fault")


def _completion_body(model: str, content: str, finish_reason: str, prompt_tokens: int, cached_tokens: int) -> dict[str, Any]:
    """A ChatCompletion as the openai client expects it."""
    completion_tokens = len(content) // CHARS_PER_TOKEN
    return {
        "id": f"chatcmpl-replay-{uuid.uuid4().hex[:16]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "system_fingerprint": "safeforge-replay",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content, "refusal": None},
                "finish_reason": finish_reason,
                "logprobs": None,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
            "prompt_tokens_details": {"cached_tokens": cached_tokens},
        },
    }


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, so clients reuse connections
    disable_nagle_algorithm = True  # headers and body go in two writes; don't wait ~40 ms between them
    timeout = IDLE_CONNECTION_TIMEOUT_S
    server: _ReplayHTTPServer  # pyright: ignore[reportIncompatibleVariableOverride]  # typeshed's handler is not generic in its server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (stdlib signature)
        logger.debug("%s " + format, self.client_address[0], *args)

    def do_GET(self) -> None:
        state = self.server.state
        if self.path == "/v1/models":
            with state.lock:
                state.model_lists += 1
            model = {"id": "replay", "object": "model", "created": 0, "owned_by": REPLAY_OWNER}
            self._send(_Reply(200, {"object": "list", "data": [model]}))
        elif self.path == "/admin/stats":
            self._send(_Reply(200, state.stats()))
        else:
            self._send(_error(404, f"no such endpoint: GET {self.path}", "not_found"))

    def do_POST(self) -> None:
        state = self.server.state
        try:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        except json.JSONDecodeError as exc:
            self._send(_error(400, f"request body is not JSON: {exc}", "invalid_request_error"))
            return
        if not isinstance(body, dict):
            self._send(_error(400, "request body must be a JSON object", "invalid_request_error"))
            return
        if self.path == "/v1/chat/completions":
            # the request leaves the count before its reply is written: a client that has its answer may send
            # its next request before this thread, starved on a busy machine, would otherwise have counted out
            with state.in_flight_request():
                state.released.wait()
                state.wait_for_group()
                reply = state.chat_completion(body, self.headers.get("Authorization", ""))
                state.delay(reply)
            self._send(reply)
        elif self.path == "/admin/reset":
            state.reset()
            self._send(_Reply(200, state.stats()))
        elif self.path == "/admin/faults":
            try:
                state.set_faults(body)
            except (TypeError, ValueError) as exc:
                self._send(_error(400, str(exc), "invalid_request_error"))
                return
            self._send(_Reply(200, {"ok": True}))
        elif self.path == "/admin/hold":
            if not isinstance(body.get("hold"), bool):
                self._send(_error(400, "`hold` must be true or false", "invalid_request_error"))
                return
            (state.released.clear if body["hold"] else state.released.set)()
            self._send(_Reply(200, {"hold": body["hold"]}))
        elif self.path == "/admin/clock":
            try:
                clock = state.set_clock(body)
            except (TypeError, ValueError) as exc:
                self._send(_error(400, str(exc), "invalid_request_error"))
                return
            self._send(_Reply(200, clock))
        else:
            self._send(_error(404, f"no such endpoint: POST {self.path}", "not_found"))

    def _send(self, reply: _Reply) -> None:
        data = json.dumps(reply.payload).encode("utf-8")
        try:
            self.send_response(reply.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in reply.headers:
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            logger.debug("client went away before the reply (e.g. after its timeout)")


class _ReplayHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = LISTEN_BACKLOG

    def __init__(self, address: tuple[str, int], state: _ReplayState):
        super().__init__(address, _Handler)
        self.state = state


class ReplayServer:
    """The replay server, bound at construction (port 0 = a free port)."""

    def __init__(
        self,
        responses_dir: Path,
        options: ReplayOptions = DEFAULT_OPTIONS,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
    ):
        for kind in options.fault_kinds:
            check_fault(kind)
        self._httpd = _ReplayHTTPServer((host, port), _ReplayState(load_entries(responses_dir), options))
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def serve_forever(self) -> None:
        self._httpd.serve_forever(poll_interval=SHUTDOWN_POLL_S)

    def start(self) -> None:
        """Serve from a background thread."""
        self._thread = threading.Thread(target=self.serve_forever, name="replay-server", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join()


@contextmanager
def running_replay_server(responses_dir: Path, *, host: str = "127.0.0.1", port: int = 0, **options: Any) -> Iterator[str]:
    """Run the server in a background thread; yields its base URL (…/v1). `options` are
    ReplayOptions fields."""
    server = ReplayServer(responses_dir, ReplayOptions(**options), host=host, port=port)
    server.start()
    try:
        yield server.base_url
    finally:
        server.stop()


# -- command line ----------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    defaults = ReplayOptions()
    parser.add_argument(
        "--responses",
        type=Path,
        metavar="DIR",
        help="directory of replay files (default: SAFEFORGE_REPLAY_RESPONSES, else the bundled hand-written ones)",
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", default=0, **ANY_PORT.argument("0 picks a free port (default)"))
    parser.add_argument(
        "--latency-ms", default=defaults.latency_ms, **Range(0, 3_600_000, whole=False).argument("delay before every answer")
    )
    parser.add_argument("--no-json-schema", action="store_true", help="answer 400 to json_schema response_format")
    parser.add_argument("--timeout-sleep-s", default=defaults.timeout_sleep_s, **SECONDS.argument("sleep of a timeout fault"))
    parser.add_argument("--retry-after-s", default=defaults.retry_after_s, **SECONDS.argument("Retry-After of a 429 fault"))
    parser.add_argument("--fault-rate", default=defaults.fault_rate, **Range(0, 1, whole=False).argument("probability of a random fault"))
    parser.add_argument("--fault-kinds", default=",".join(defaults.fault_kinds), help="comma-separated kinds of random faults")
    parser.add_argument("--seed", default=defaults.seed, **SEED.argument("seed of the random faults"))
    parser.add_argument("--rpm", default=0, **RATE_LIMIT.argument("requests per minute before a 429 (0: no limit)"))
    parser.add_argument("--tpm", default=0, **RATE_LIMIT.argument("tokens per minute before a 429 (0: no limit)"))


def run_from_args(args: argparse.Namespace) -> int:
    options = replace(
        ReplayOptions(),
        latency_ms=args.latency_ms,
        json_schema=not args.no_json_schema,
        timeout_sleep_s=args.timeout_sleep_s,
        retry_after_s=args.retry_after_s,
        fault_rate=args.fault_rate,
        fault_kinds=tuple(kind.strip() for kind in args.fault_kinds.split(",") if kind.strip()),
        seed=args.seed,
        requests_per_minute=args.rpm,
        tokens_per_minute=args.tpm,
    )
    try:
        responses = args.responses or Settings.load().replay_responses_dir
        server = ReplayServer(responses, options, host=args.host, port=args.port)
    except (ReplayFormatError, ValueError, OSError) as exc:
        print(f"replay-server: {exc}", file=sys.stderr)
        return 2
    print(f"replay server listening on {server.base_url}", flush=True)
    print(f"  OPENAI_BASE_URL={server.base_url} (responses are hand-written, not a model's)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m safeforge.llm.replay_server",
        description="OpenAI-compatible server replaying hand-written responses.",
    )
    add_arguments(parser)
    return run_from_args(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
