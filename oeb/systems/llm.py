"""The single-shot LLM system: any `org/model` id, asked once with the whole PDF and the schema,
through OpenRouter (the default) or the provider's own API (`provider`: openai, anthropic, google),
one request per document or, with `batch: true`, in the provider's batches at the batch price."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from oeb.systems._reading import model_json
from oeb.systems.base import Adapter, Call, Cost, Deadline, Price
from oeb.systems.errors import OptionError, SystemFailed, Unusable
from oeb.systems.providers import SYSTEM_PROMPT, BatchLimits, BatchStatus, Provider, Reply, user_text
from oeb.systems.providers.anthropic import Anthropic
from oeb.systems.providers.chat import OpenAI, OpenRouter
from oeb.systems.providers.google import Google

CEILINGS = {
    "anthropic/claude-opus-5": 128000,
    "openai/gpt-5.6-sol": 128000,
    "openai/gpt-5.6-sol-pro": 128000,
    "google/gemini-3.7-flash": 65536,
}
"""Published output-token ceilings; any other model gets `DEFAULT_CEILING`."""
DEFAULT_CEILING = 64000
EXAMPLES = ("openai/gpt-5.6-sol", "anthropic/claude-opus-5", "google/gemini-3.7-flash")
PROVIDERS: dict[str, type[Provider]] = {p.name: p for p in (OpenRouter, OpenAI, Anthropic, Google)}
PRICES: dict[tuple[str, str], tuple[float, float]] = {}
"""Standard dollars per million input and output tokens by (provider, model), where oeb knows a
published figure; none is known for the published models' ids yet, so their cost is recorded as
unknown (the tokens kept) until `usd_per_mtok_in` and `usd_per_mtok_out` are set."""
PROMPT_CHARS_PER_TOKEN = 2
"""Characters of prompt per token, counted low so a batch's worst case is not an underestimate."""


@dataclass(frozen=True)
class LLMSingleShot(Adapter):
    name: ClassVar[str] = "llm_single_shot"
    description: ClassVar[str] = (
        "any org/model id, one request with the PDF and the schema (OpenRouter, or the provider's own API)"
    )
    keys: ClassVar[tuple[str, ...]] = ("OPENROUTER_API_KEY",)
    stand_ins: ClassVar[dict[str, str]] = {"OPENROUTER_API_KEY": "OPENAI_API_KEY"}
    key_notes: ClassVar[tuple[str, ...]] = tuple(
        f"with provider: {p.name}, export {p.key}=<key>" for p in PROVIDERS.values() if p is not OpenRouter
    )
    workers: ClassVar[int] = 5
    located: ClassVar[tuple[str, ...]] = ("base_url",)
    price: ClassVar[Price | None] = None
    """Billed per token, which no page count predicts; OpenRouter reports each answer's cost."""

    model: str = field(metadata={"help": "the org/model id (the system name)"})
    provider: str = field(
        default="openrouter",
        metadata={"help": "whose API answers (the model id after its org/)", "choices": tuple(PROVIDERS)},
    )
    max_output_tokens: int | None = field(
        default=None, metadata={"help": "output-token cap; by default the model's published ceiling"}
    )
    base_url: str | None = field(
        default=None, metadata={"help": "API address; by default the provider's (a proxy, a test server)"}
    )
    attempts: int = field(default=3, metadata={"help": "completions to try when an answer is unusable"})
    temperature: float | None = field(
        default=None,
        metadata={"help": "sampling temperature of every request, direct or batched (null: the provider's default)"},
    )
    usd_per_mtok_in: float | None = field(
        default=None, metadata={"help": "standard price per million input tokens (null: the published one, if known)"}
    )
    usd_per_mtok_out: float | None = field(
        default=None, metadata={"help": "standard price per million output tokens (null: the published one, if known)"}
    )
    batch_discount: float = field(default=0.5, metadata={"help": "the batch price as a fraction of the standard"})
    batch: bool = field(
        default=False, metadata={"help": "send the documents as provider batches (openai, anthropic, google)"}
    )
    poll_interval: float = field(default=30.0, metadata={"help": "seconds before a batch's first poll"})
    poll_max: float = field(default=300.0, metadata={"help": "seconds between polls at most, backing off to it"})

    def __post_init__(self) -> None:
        if self.max_output_tokens is None:
            object.__setattr__(self, "max_output_tokens", CEILINGS.get(self.model, DEFAULT_CEILING))
        if self.attempts < 1:
            raise OptionError(f"option 'attempts' of {self.model} must be at least 1")
        if self.provider not in PROVIDERS:
            raise OptionError(
                f"option 'provider' of {self.model} is one of {', '.join(PROVIDERS)}, not {self.provider!r}"
            )
        cls = PROVIDERS[self.provider]
        if self.batch and cls.limits is None:
            raise OptionError(
                f"{self.provider} sells no batches: option 'batch' of {self.model} needs provider openai, "
                "anthropic or google"
            )
        if not 0 < self.batch_discount <= 1:
            raise OptionError(f"option 'batch_discount' of {self.model} is a fraction in (0, 1]")
        if min(self.poll_interval, self.poll_max) <= 0 or self.poll_max < self.poll_interval:
            raise OptionError(f"options 'poll_interval' and 'poll_max' of {self.model} are positive, max the larger")
        if self.temperature is not None and not 0 <= self.temperature <= 2:
            raise OptionError(f"option 'temperature' of {self.model} is between 0 and 2, or null for the provider's")
        for name in ("usd_per_mtok_in", "usd_per_mtok_out"):
            if (getattr(self, name) or 0) < 0:
                raise OptionError(f"option {name!r} of {self.model} must not be negative")

    @property
    def label(self) -> str:
        return self.model.replace("/", "__")

    @classmethod
    def key_variables(cls) -> tuple[str, ...]:
        """OpenRouter's key and its stand-in, then each provider's own (the `provider` option picks one)."""
        return tuple(dict.fromkeys([*super().key_variables(), *(p.key for p in PROVIDERS.values())]))

    def key_names(self) -> tuple[str, ...]:
        return (PROVIDERS[self.provider].key,)

    def shown_options(self) -> dict[str, Any]:
        """As every adapter's, with the endpoint the key goes to: the provider's when base_url is unset."""
        return super().shown_options() | {"base_url": self.base_url or PROVIDERS[self.provider].base_url}

    def _provider(self) -> Provider:
        cls = PROVIDERS[self.provider]
        model = self.model if cls is OpenRouter else self.model.split("/", 1)[-1]
        assert self.max_output_tokens is not None
        return cls(model, self.base_url or cls.base_url, self.env(cls.key), self.max_output_tokens, self.temperature)

    def rates(self) -> tuple[float, float] | None:
        """The standard dollars per million input and output tokens, when known."""
        published = PRICES.get((self.provider, self.model.split("/", 1)[-1]), (None, None))
        rates = (
            self.usd_per_mtok_in if self.usd_per_mtok_in is not None else published[0],
            self.usd_per_mtok_out if self.usd_per_mtok_out is not None else published[1],
        )
        return None if rates[0] is None or rates[1] is None else (rates[0], rates[1])

    def cost(self, reply: Reply, *, batch: bool) -> Cost:
        """What one reply cost: OpenRouter's own figure, else its tokens at the provider's rates
        (times `batch_discount` for a batch), else unknown with the tokens kept."""
        tokens = {"tokens_in": reply.tokens_in, "tokens_out": reply.tokens_out}
        if self.provider == OpenRouter.name:
            return Cost(usd=reply.usd, source="usage.cost", **tokens)
        rates = self.rates()
        if rates is None or reply.tokens_in is None or reply.tokens_out is None:
            return Cost(source="tokens only: no price (set usd_per_mtok_in and usd_per_mtok_out)", **tokens)
        scale = self.batch_discount if batch else 1.0
        usd = (reply.tokens_in * rates[0] + reply.tokens_out * rates[1]) / 1e6 * scale
        at = f"tokens at ${rates[0]:g}/${rates[1]:g} per Mtok in/out"
        source = f"{at} x batch_discount {self.batch_discount:g} (batch price)" if batch else at
        return Cost(usd=round(usd, 6), source=source, **tokens)

    def extract(self, document: Path, schema: dict[str, Any], deadline: Deadline) -> Call:
        provider = self._provider()
        calls: list[dict[str, Any]] = []
        cost = Cost()
        reason = ""
        for k in range(self.attempts):
            if k:
                deadline.check(f"asking {self.model} again after an unusable answer")
                deadline.sleep(deadline.policy.poll_delay(k) + random.uniform(0, deadline.policy.poll_backoff / 2))
            try:
                reply = provider.complete(document, schema, deadline)
            except SystemFailed as failure:
                failure.cost = cost + (failure.cost or Cost())
                raise
            cost = cost + self.cost(reply, batch=False)
            try:
                return self.answered(reply, calls, cost)
            except Unusable as unusable:
                reason = unusable.message
        raise SystemFailed(
            f"all {self.attempts} attempts of {self.model} returned an unusable answer; last: {reason}",
            status=200,
            body=json.dumps(calls),
            cost=cost,
        )

    def answered(self, reply: Reply, calls: list[dict[str, Any]], cost: Cost) -> Call:
        """The answer of one reply (`calls` the log of every reply so far, this one appended);
        `Unusable` to ask again, `SystemFailed` to stop."""
        call: dict[str, Any] = {"usage": reply.usage, "model": reply.model}
        calls.append(call)
        content = reply.content
        if reply.truncated:
            raise SystemFailed(
                f"the answer was truncated at max_tokens={self.max_output_tokens} "
                f"({len(content or '')} characters came back)",
                status=200,
                cost=cost,
            )
        if content is None and reply.error is not None:
            raise Unusable(reply.error, status=200, cost=cost)
        if not content:
            raise SystemFailed(
                f"{self.model} returned an empty completion (finish_reason {reply.finish})", status=200, cost=cost
            )
        if isinstance(content, dict):
            answer: Any = content
        else:
            try:
                answer = model_json(content)
            except ValueError as error:
                call["text"] = content
                raise Unusable(f"the answer is not JSON ({error})", status=200, cost=cost) from error
        if not isinstance(answer, dict) or not answer:
            call["text"] = content if isinstance(content, str) else json.dumps(content)
            raise Unusable(
                f"the answer is not a non-empty JSON object but {type(answer).__name__}", status=200, cost=cost
            )
        raw = {
            "extraction": answer,
            "calls": calls,
            "finish_reason": reply.finish,
            "max_output_tokens": self.max_output_tokens,
            "model": self.model,
        }
        return Call(raw=raw, cost=cost, job_id=reply.id)

    def batching(self) -> LLMBatches | None:
        return LLMBatches(self) if self.batch else None


class LLMBatches:
    """The model's provider batches (`oeb.systems.batches.Batches`), priced at the batch rate."""

    def __init__(self, adapter: LLMSingleShot) -> None:
        self.adapter = adapter
        self._api = adapter._provider()
        assert self._api.limits is not None
        self.limits: BatchLimits = self._api.limits
        self.provider = self._api.name
        self.discount = adapter.batch_discount

    @property
    def priced(self) -> bool:
        return self.adapter.rates() is not None

    def custom_id(self, doc_id: str) -> str | None:
        return doc_id if self._api.valid_id(doc_id) else None

    def entry(self, custom_id: str, document: Path, schema: dict[str, Any]) -> dict[str, Any]:
        return self._api.entry(custom_id, document, schema)

    def worst_usd(self, pages: int | None, document: Path, schema: dict[str, Any]) -> float | None:
        rates = self.adapter.rates()
        if rates is None:
            return None
        assert self.adapter.max_output_tokens is not None
        prompt = (len(SYSTEM_PROMPT) + len(user_text(schema))) // PROMPT_CHARS_PER_TOKEN
        if pages is None:  # not countable: every two bytes of the file a token
            tokens_in = prompt + document.stat().st_size // 2
        else:
            tokens_in = prompt + pages * self._api.tokens_per_page
        worst = (tokens_in * rates[0] + self.adapter.max_output_tokens * rates[1]) / 1e6
        return worst * self.discount

    def create(self, entries: list[dict[str, Any]], tag: str, deadline: Deadline) -> dict[str, Any]:
        return self._api.create(entries, tag, deadline)

    def find(
        self, tag: str, requests: int, since: float, known: frozenset[str], deadline: Deadline
    ) -> dict[str, Any] | None:
        return self._api.find(tag, requests, since, known, deadline)

    def status(self, handle: dict[str, Any], deadline: Deadline) -> BatchStatus:
        return self._api.status(handle, deadline)

    def results(self, handle: dict[str, Any], deadline: Deadline) -> dict[str, Call | SystemFailed]:
        answers: dict[str, Call | SystemFailed] = {}
        for custom_id, reply in self._api.results(handle, deadline).items():
            if isinstance(reply, SystemFailed):
                answers[custom_id] = reply
                continue
            cost = self.adapter.cost(reply, batch=True)
            try:
                answers[custom_id] = self.adapter.answered(reply, [], cost)
            except SystemFailed as failure:
                answers[custom_id] = failure
        return answers
