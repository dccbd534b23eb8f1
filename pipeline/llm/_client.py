"""LLMClient: cached, rate-limited, retried, ledgered calls to an OpenAI-compatible endpoint."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Generic, Literal, TypeVar
from urllib.parse import urlsplit

import openai
from openai.types.chat import ChatCompletion
from pydantic import BaseModel, ValidationError

from safeforge.llm._cache import CachedResponse, CacheRequest, ResponseCache
from safeforge.llm._config import REPLAY_OWNER, LLMConfig
from safeforge.llm._errors import LLMError
from safeforge.llm._ledger import CallLedger, LedgerRow
from safeforge.llm._limits import CallLimiter, Clock, Sleep
from safeforge.llm._prices import PriceTable
from safeforge.llm._redact import Redactor
from safeforge.llm._retry import Failure, RetryPolicy
from safeforge.llm._structured import (
    InvalidResponse,
    JsonMode,
    messages_for,
    parse_reply,
    rejects_response_format,
    repair_turns,
    response_format,
    schema_fingerprint,
)
from safeforge.llm._usage import TokenUsage

EndpointKind = Literal["real", "replay"]
"""Whether an endpoint is a model's or Safeforge's replay server (hand-written responses)."""

logger = logging.getLogger("safeforge.llm")

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)
Message = dict[str, Any]
Parse = Callable[[str | None, str | None], T]

CHARS_PER_TOKEN = 4  # rough estimate used by the token-per-minute limit before a call
PLACEHOLDER_API_KEY = "not-needed"  # sent when no key is configured (local vLLM / Ollama)
RESERVED_DECODING = frozenset({"model", "messages", "response_format", "stream", "n"})


@dataclass(frozen=True)
class LLMResult(Generic[T]):
    """A validated response. On a cache hit, usage is zero, cost 0.0 and attempts 0."""

    parsed: T
    """The pydantic object (complete_json) or the text (complete_text)."""
    raw_text: str
    model: str
    usage: TokenUsage
    """Tokens of every HTTP call made for this result, the repair turn included."""
    cost_usd: float | None
    """Dollars spent on this result; None when the model has no price."""
    cache_hit: bool
    attempts: int
    """HTTP calls made, retries and the repair turn included."""
    finish_reason: str | None
    repaired: bool = False
    """True when the first reply failed validation and the repair turn fixed it."""


@dataclass
class _Call:
    """Book-keeping of one complete_json / complete_text call."""

    request: CacheRequest
    cache_note: str | None
    attempts: int = 0
    latency_s: float = 0.0
    usage: TokenUsage = field(default_factory=TokenUsage)
    cost_usd: float | None = 0.0
    pending_row: int | None = None
    """The ledger row of the attempt in flight (written before it was sent)."""

    def spent(self, usage: TokenUsage, cost: float | None) -> None:
        self.usage += usage
        self.cost_usd = None if cost is None or self.cost_usd is None else self.cost_usd + cost


def read_completion(reply: bytes) -> ChatCompletion:
    """A chat completion's body as the openai client reads it: validated by pydantic-core when it
    conforms to the SDK's types (several times faster than the SDK's own reading), else built as
    leniently as the SDK builds it (a provider's values the types do not list are kept)."""
    try:
        return ChatCompletion.model_validate_json(reply)
    except ValidationError:
        return ChatCompletion.construct(**json.loads(reply))


def _estimate_tokens(messages: list[Message], decoding: dict[str, Any]) -> int:
    chars = sum(len(str(m.get("content") or "")) for m in messages)
    output_cap = decoding.get("max_tokens") or decoding.get("max_completion_tokens") or 0
    return chars // CHARS_PER_TOKEN + int(output_cap)


class LLMClient:
    """Async client for one OpenAI-compatible endpoint. Use one instance per event loop,
    as `async with LLMClient(config) as client:`."""

    def __init__(
        self,
        config: LLMConfig,
        *,
        cache: ResponseCache | None = None,
        ledger: CallLedger | None = None,
        prices: PriceTable | None = None,
        clock: Clock = time.monotonic,
        sleep: Sleep = asyncio.sleep,
    ):
        """`clock` and `sleep` are what the rate limits and the retries measure and wait with
        (tests pass fake ones); latencies are measured on time.monotonic whatever they are."""
        self.config = config
        api_key = config.api_key.get_secret_value() if config.api_key else None
        self._redact = Redactor([api_key])
        self._openai = openai.AsyncOpenAI(
            api_key=api_key or PLACEHOLDER_API_KEY,
            base_url=config.base_url,
            timeout=config.timeout_s,
            max_retries=0,  # the retry policy lives in _retry.RetryPolicy only
            http_client=openai.DefaultAioHttpClient(timeout=config.timeout_s),  # aiohttp: less CPU per request than httpx
        )
        self.cache = cache or ResponseCache(config.db_path)
        self.ledger = ledger or CallLedger(config.db_path)
        self._owned_stores = [store for store, given in ((self.cache, cache), (self.ledger, ledger)) if given is None]
        self._endpoint = urlsplit(config.base_url).hostname or config.base_url
        self.prices = prices or PriceTable(config.prices, endpoint=self._endpoint)
        self._policy = RetryPolicy(config.max_attempts, config.backoff_base_s, config.backoff_max_s, config.retry_after_max_s, sleep=sleep)
        self._limiter = CallLimiter(config.max_concurrency, config.requests_per_minute, config.tokens_per_minute, clock=clock, sleep=sleep)
        self.json_mode: JsonMode = "json_object" if config.structured_output == "json_object" else "json_schema"
        """How JSON is requested now; "auto" starts at json_schema and may fall back for good."""
        self._endpoint_kind: EndpointKind | None = None
        self._endpoint_lock = asyncio.Lock()

    async def endpoint_kind(self) -> EndpointKind | None:
        """ "replay" when the endpoint is Safeforge's replay server (hand-written responses, not a
        model's), "real" for any other endpoint that lists its models, None when it cannot tell.
        Asked once (GET /models), however many records ask at the same time."""
        async with self._endpoint_lock:
            if self._endpoint_kind is None:
                try:
                    models = await self._openai.models.list()
                except openai.OpenAIError:
                    return None
                owners = {getattr(model, "owned_by", None) for model in models.data}
                self._endpoint_kind = "replay" if REPLAY_OWNER in owners else "real"
        return self._endpoint_kind

    async def __aenter__(self) -> LLMClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the HTTP client, and the cache and ledger unless they were passed in."""
        await self._openai.close()
        for store in self._owned_stores:
            store.close()

    # -- public calls -------------------------------------------------------------------------

    async def complete_json(
        self,
        stage: str,
        record_id: str,
        messages: list[Message],
        schema: type[M],
        template_hash: str,
        *,
        no_cache: bool = False,
        **decoding: Any,
    ) -> LLMResult[M]:
        """A reply validated against `schema`; an invalid one is sent back once with the error.

        `decoding` (temperature, top_p, max_tokens, seed, ... and endpoint-specific extras)
        goes into the request body and the cache key. Raises LLMError.
        """
        request = self.cache_request(stage, record_id, messages, schema, template_hash, **decoding)
        return await self._run(request, schema, lambda text, finish: parse_reply(schema, text, finish), no_cache)

    async def complete_text(
        self,
        stage: str,
        record_id: str,
        messages: list[Message],
        template_hash: str,
        *,
        no_cache: bool = False,
        **decoding: Any,
    ) -> LLMResult[str]:
        """A plain-text reply (no output cap unless `max_tokens` is passed). Raises LLMError."""
        request = self.cache_request(stage, record_id, messages, None, template_hash, **decoding)
        return await self._run(request, None, lambda text, _finish: text or "", no_cache)

    def cache_request(
        self,
        stage: str,
        record_id: str,
        messages: list[Message],
        schema: type[BaseModel] | None,
        template_hash: str,
        **decoding: Any,
    ) -> CacheRequest:
        """The cache identity of a call (schema None = complete_text)."""
        if reserved := RESERVED_DECODING & decoding.keys():
            raise TypeError(f"not decoding parameters: {sorted(reserved)} (the model is set per stage in LLMConfig)")
        defaults = {"temperature": self.config.temperature}
        if schema is not None:
            defaults["max_tokens"] = self.config.json_max_tokens
        merged = {name: value for name, value in {**defaults, **decoding}.items() if value is not None}
        return CacheRequest(
            stage=stage,
            record_id=record_id,
            model=self.config.model_for(stage),
            endpoint=self._endpoint,
            messages=list(messages),
            decoding=merged,
            schema="text" if schema is None else schema_fingerprint(schema),
            template_hash=template_hash,
        )

    def explain_miss(
        self,
        stage: str,
        record_id: str,
        messages: list[Message],
        schema: type[BaseModel] | None,
        template_hash: str,
        **decoding: Any,
    ) -> str | None:
        """Why this call would miss the cache (None: it would hit)."""
        return self.cache.explain_miss(self.cache_request(stage, record_id, messages, schema, template_hash, **decoding))

    # -- the call pipeline: cache -> (send -> validate -> repair once) -> cache ----------------

    async def _run(self, request: CacheRequest, schema: type[BaseModel] | None, parse: Parse[T], no_cache: bool) -> LLMResult[T]:
        note: str | None = "no_cache requested"
        if not (no_cache or self.config.no_cache):
            hit, note = self.cache.lookup(request)
            if hit is not None:
                try:
                    return self._cache_hit(request, hit, parse(hit.text, hit.finish_reason))
                except InvalidResponse as problem:
                    note = self._redact(f"cached response no longer validates: {problem}")
        logger.debug("cache miss stage=%s record=%s: %s", request.stage, request.record_id, note)
        call = _Call(request, note)
        try:
            return await self._until_valid(call, schema, parse)
        except LLMError as err:  # report the attempts of the whole call, not of its last round
            raise LLMError(err.reason, err.message, attempts=call.attempts, status=err.status) from None

    def _cache_hit(self, request: CacheRequest, hit: CachedResponse, parsed: T) -> LLMResult[T]:
        self.ledger.record(LedgerRow(request.stage, request.record_id, request.model, 0, "cache_hit", cost_usd=0.0))
        return LLMResult(
            parsed=parsed,
            raw_text=hit.text,
            model=request.model,
            usage=TokenUsage(),
            cost_usd=0.0,
            cache_hit=True,
            attempts=0,
            finish_reason=hit.finish_reason,
        )

    async def _until_valid(self, call: _Call, schema: type[BaseModel] | None, parse: Parse[T]) -> LLMResult[T]:
        conversation = list(call.request.messages)
        repairing = False
        while True:
            completion, usage = await self._complete(call, conversation, schema)
            choice = completion.choices[0] if completion.choices else None
            text = choice.message.content if choice else None
            finish_reason = choice.finish_reason if choice else None
            cost = self.prices.cost(call.request.model, usage)
            call.spent(usage, cost)
            try:
                parsed = parse(text, finish_reason)
            except InvalidResponse as problem:
                message = self._redact(str(problem))
                self._record(call, "validation_failed" if repairing else "validation_error", usage, cost, error=message)
                if repairing:
                    raise LLMError("validation", message, attempts=call.attempts) from None
                conversation += repair_turns(text, problem)
                repairing = True
                continue
            self._record(call, "ok", usage, cost)
            reply = CachedResponse(text or "", finish_reason)
            self.cache.put(call.request, reply)
            return LLMResult(
                parsed=parsed,
                raw_text=reply.text,
                model=call.request.model,
                usage=call.usage,
                cost_usd=call.cost_usd,
                cache_hit=False,
                attempts=call.attempts,
                finish_reason=finish_reason,
                repaired=repairing,
            )

    async def _complete(
        self, call: _Call, conversation: list[Message], schema: type[BaseModel] | None
    ) -> tuple[ChatCompletion, TokenUsage]:
        """One reply, retried per the policy; falls back to json_object when "auto" finds
        json_schema unsupported."""
        while True:
            mode: JsonMode | None = None
            messages: list[Message] = conversation
            body_format: Any = openai.omit
            if schema is not None:
                mode = self.json_mode
                messages = messages_for(conversation, schema, mode)
                body_format = response_format(schema, mode)
            self._within_context(call, messages)
            try:
                return await self._policy.run(
                    partial(self._send, call, messages, body_format),
                    redact=self._redact,
                    on_failure=partial(self._failed, call, mode),
                )
            except LLMError as err:
                if not self._falls_back(mode, err.status, err.message):
                    raise
                self.json_mode = "json_object"
                logger.warning("endpoint rejects json_schema response_format; using json_object from now on")

    def _within_context(self, call: _Call, messages: list[Message]) -> None:
        """LLMError("context") for a request larger than the models' context, before it is sent
        (recorded in the ledger, with no tokens spent)."""
        estimate = _estimate_tokens(messages, call.request.decoding)
        if estimate <= self.config.context_tokens:
            return
        message = (
            f"the request is about {estimate:,} tokens (its messages and output cap), more than the models' context of "
            f"{self.config.context_tokens:,} (SAFEFORGE_LLM_CONTEXT_TOKENS); it was not sent"
        )
        self._record(call, "refused_context", TokenUsage(), 0.0, error=message)
        raise LLMError("context", message, attempts=call.attempts)

    def _falls_back(self, mode: JsonMode | None, status: int | None, message: str) -> bool:
        return mode == "json_schema" and self.config.structured_output == "auto" and status == 400 and rejects_response_format(message)

    async def _send(self, call: _Call, messages: list[Message], body_format: Any) -> tuple[ChatCompletion, TokenUsage]:
        """One HTTP request, inside the concurrency and rate limits."""
        call.attempts += 1
        decoding = call.request.decoding
        async with self._limiter.slot(_estimate_tokens(messages, decoding)) as slot:
            # written once admitted: a call waiting for its slot is not in flight, and thousands of
            # waiting calls would otherwise write their rows while the first ones' answers wait
            call.pending_row = self.ledger.begin(call.request.stage, call.request.record_id, call.request.model, call.attempts)
            started = time.monotonic()
            try:
                # The body is plain JSON already: posting it skips the SDK's per-request walk of
                # the typed parameters, which costs more CPU than the HTTP exchange at high concurrency.
                reply = await self._openai.post("/chat/completions", body=self._body(call, messages, body_format), cast_to=bytes)
            finally:
                call.latency_s = time.monotonic() - started
            completion = read_completion(reply)
            usage = TokenUsage.from_completion_usage(completion.usage)
            slot.tokens_used = usage.total
        return completion, usage

    @staticmethod
    def _body(call: _Call, messages: list[Message], body_format: Any) -> dict[str, Any]:
        """The chat completion request: decoding parameters, then model, messages and format."""
        body = {**call.request.decoding, "model": call.request.model, "messages": messages}
        if body_format is not openai.omit:
            body["response_format"] = body_format
        return body

    # -- ledger ---------------------------------------------------------------------------------

    def _failed(self, call: _Call, mode: JsonMode | None, failure: Failure, delay: float | None) -> None:
        """A failed attempt: a 429 tells the limiter (every request waits, not just this one), and
        the ledger records it."""
        if failure.reason == "rate_limit":
            self._limiter.rate_limited(failure.retry_after_s, failure.limits)
        self._record_failure(call, mode, failure, delay)

    def _record_failure(self, call: _Call, mode: JsonMode | None, failure: Failure, delay: float | None) -> None:
        if delay is not None:
            outcome = f"retry_{failure.reason}"
            logger.warning(
                "stage=%s record=%s attempt %d failed (%s), retrying in %.2fs: %s",
                call.request.stage,
                call.request.record_id,
                call.attempts,
                failure.reason,
                delay,
                failure.message,
            )
        elif self._falls_back(mode, failure.status, failure.message):
            outcome = "retry_schema_unsupported"
        else:
            outcome = "error"
            logger.error(
                "stage=%s record=%s attempt %d failed for good (%s): %s",
                call.request.stage,
                call.request.record_id,
                call.attempts,
                failure.reason,
                failure.message,
            )
        cost = self.prices.cost(call.request.model, TokenUsage())
        call.spent(TokenUsage(), cost)
        self._record(call, outcome, TokenUsage(), cost, error=failure.message, retry_delay_s=delay)

    def _record(
        self,
        call: _Call,
        outcome: str,
        usage: TokenUsage,
        cost: float | None,
        *,
        error: str | None = None,
        retry_delay_s: float | None = None,
    ) -> None:
        request = call.request
        row_id, call.pending_row = call.pending_row, None
        write = self.ledger.record if row_id is None else partial(self.ledger.finish, row_id)
        write(
            LedgerRow(
                stage=request.stage,
                record_id=request.record_id,
                model=request.model,
                attempt=call.attempts,
                outcome=outcome,
                tokens_in=usage.prompt,
                tokens_out=usage.completion,
                tokens_cached=usage.cached,
                latency_s=call.latency_s,
                cost_usd=cost,
                error=error,
                cache_note=call.cache_note,
                retry_delay_s=retry_delay_s,
            )
        )
