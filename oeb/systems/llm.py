"""The single-shot LLM system: any `org/model` id, asked once with the whole PDF and the schema over
an OpenAI-compatible chat-completions API (OpenRouter by default; any `base_url` works)."""

from __future__ import annotations

import base64
import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import openai

from oeb.systems._http import retry_after
from oeb.systems._reading import model_json, number
from oeb.systems.base import Adapter, Call, Cost, Deadline, Price
from oeb.systems.errors import OptionError, SystemFailed, SystemTimeout, SystemUnreachable

CEILINGS = {
    "anthropic/claude-opus-5": 128000,
    "openai/gpt-5.6-sol": 128000,
    "openai/gpt-5.6-sol-pro": 128000,
    "google/gemini-3.7-flash": 65536,
}
"""Published output-token ceilings; any other model gets `DEFAULT_CEILING`."""
DEFAULT_CEILING = 64000
EXAMPLES = ("openai/gpt-5.6-sol", "anthropic/claude-opus-5", "google/gemini-3.7-flash")

SYSTEM_PROMPT = """\
You are a document extraction system. You receive a PDF document and a JSON Schema.
Fill the schema from the document, following each field's description.
Read the whole document before answering.
Copy literal values (names, identifiers, dates, amounts) exactly as printed; do not reformat them.
Work carefully through values that must be derived or computed.
List every item of an array; never truncate or summarise a list.
Give numbers as JSON numbers and booleans as JSON booleans.
Use null when the document does not hold a value; use [] only for a list that applies but is empty.
Answer with one JSON object matching the schema and nothing else."""
LEAD_IN = "Extract the information from this document according to the following JSON Schema."


def _count(value: Any) -> int | None:
    """A token count, or None when the provider sent none."""
    found = number(value)
    return None if found is None else int(found)


class _Unusable(Exception):
    """An answer worth asking again for (no choices, not JSON, not a non-empty object)."""


@dataclass(frozen=True)
class LLMSingleShot(Adapter):
    name: ClassVar[str] = "llm_single_shot"
    description: ClassVar[str] = "any org/model id, one chat completion with the PDF and the schema (OpenRouter)"
    keys: ClassVar[tuple[str, ...]] = ("OPENROUTER_API_KEY",)
    stand_ins: ClassVar[dict[str, str]] = {"OPENROUTER_API_KEY": "OPENAI_API_KEY"}
    workers: ClassVar[int] = 5
    located: ClassVar[tuple[str, ...]] = ("base_url",)
    price: ClassVar[Price | None] = None
    """Billed per token, which no page count predicts; OpenRouter reports each answer's cost."""

    model: str = field(metadata={"help": "the org/model id (the system name)"})
    max_output_tokens: int | None = field(
        default=None, metadata={"help": "output-token cap; by default the model's published ceiling"}
    )
    base_url: str = field(default="https://openrouter.ai/api/v1", metadata={"help": "OpenAI-compatible API address"})
    attempts: int = field(default=3, metadata={"help": "completions to try when an answer is unusable"})

    def __post_init__(self) -> None:
        if self.max_output_tokens is None:
            object.__setattr__(self, "max_output_tokens", CEILINGS.get(self.model, DEFAULT_CEILING))
        if self.attempts < 1:
            raise OptionError(f"option 'attempts' of {self.model} must be at least 1")

    @property
    def label(self) -> str:
        return self.model.replace("/", "__")

    def _request(self, document: Path, schema: dict[str, Any]) -> dict[str, Any]:
        data_url = "data:application/pdf;base64," + base64.b64encode(document.read_bytes()).decode()
        text = f"{LEAD_IN}\n\n```json\n{json.dumps(schema, indent=2)}\n```"
        return {
            "model": self.model,
            "messages": [
                {"role": "system", "content": SYSTEM_PROMPT},
                {
                    "role": "user",
                    "content": [
                        {"type": "file", "file": {"filename": document.name, "file_data": data_url}},
                        {"type": "text", "text": text},
                    ],
                },
            ],
            "max_tokens": self.max_output_tokens,
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": "extraction", "schema": schema, "strict": False},
            },
            "extra_body": {"usage": {"include": True}},
        }

    def extract(self, document: Path, schema: dict[str, Any], deadline: Deadline) -> Call:
        client = openai.OpenAI(api_key=self.env("OPENROUTER_API_KEY"), base_url=self.base_url)
        request = self._request(document, schema)
        calls: list[dict[str, Any]] = []
        cost = Cost()
        reason = ""
        with client:
            for k in range(self.attempts):
                if k:
                    deadline.check(f"asking {self.model} again after an unusable answer")
                    deadline.sleep(deadline.policy.poll_delay(k) + random.uniform(0, deadline.policy.poll_backoff / 2))
                temperature = min(1.0, 0.1 * k)
                completion = self._complete(client, request, temperature=temperature, deadline=deadline, cost=cost)
                data = completion.model_dump()
                usage = data.get("usage") or {}
                call: dict[str, Any] = {"usage": usage or None, "model": data.get("model")}
                calls.append(call)
                cost = cost + Cost(
                    usd=number(usage.get("cost")),
                    source="usage.cost",
                    tokens_in=_count(usage.get("prompt_tokens")),
                    tokens_out=_count(usage.get("completion_tokens")),
                )
                try:
                    answer, finish = self._answer(data, call, cost)
                except _Unusable as unusable:
                    reason = str(unusable)
                    continue
                raw = {
                    "extraction": answer,
                    "calls": calls,
                    "finish_reason": finish,
                    "max_output_tokens": self.max_output_tokens,
                    "model": self.model,
                }
                return Call(raw=raw, cost=cost, job_id=data.get("id"))
        raise SystemFailed(
            f"all {self.attempts} attempts of {self.model} returned an unusable answer; last: {reason}",
            status=200,
            body=json.dumps(calls),
            cost=cost,
        )

    def _complete(
        self,
        client: openai.OpenAI,
        request: dict[str, Any],
        *,
        temperature: float,
        deadline: Deadline,
        cost: Cost,
    ) -> Any:
        try:
            return client.chat.completions.create(
                **request, temperature=temperature, timeout=max(0.001, deadline.remaining())
            )
        except openai.APITimeoutError as error:
            raise SystemTimeout(f"{self.model} did not answer in time", cost=cost) from error
        except openai.APIConnectionError as error:
            raise SystemUnreachable(f"could not reach {self.base_url}: {error}", cost=cost) from error
        except openai.APIStatusError as error:
            raise SystemFailed(
                f"{type(error).__name__}: {error.message}",
                status=error.status_code,
                cost=cost,
                retry_after=retry_after(error.response.headers),
            ) from error
        except openai.OpenAIError as error:
            raise SystemFailed(f"{type(error).__name__}: {error}", cost=cost) from error

    def _answer(self, data: dict[str, Any], call: dict[str, Any], cost: Cost) -> tuple[dict[str, Any], Any]:
        """The extraction of one completion; `_Unusable` to ask again, `SystemFailed` to stop."""
        choices = data.get("choices")
        if not choices:
            error = data.get("error")
            error = error if isinstance(error, dict) else {}
            raise _Unusable(error.get("message") or "the provider returned no choices")
        choice = choices[0]
        finish = choice.get("finish_reason")
        content = (choice.get("message") or {}).get("content")
        if finish == "length":
            raise SystemFailed(
                f"the answer was truncated at max_tokens={self.max_output_tokens} "
                f"({len(content or '')} characters came back)",
                status=200,
                cost=cost,
            )
        if not content:
            raise SystemFailed(
                f"{self.model} returned an empty completion (finish_reason {finish})", status=200, cost=cost
            )
        try:
            answer = model_json(content)
        except ValueError as error:
            call["text"] = content
            raise _Unusable(f"the answer is not JSON ({error})") from error
        if not isinstance(answer, dict) or not answer:
            call["text"] = content
            raise _Unusable(f"the answer is not a non-empty JSON object but {type(answer).__name__}")
        return answer, finish
