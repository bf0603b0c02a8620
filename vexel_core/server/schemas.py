"""Request bodies of the OpenAI-compatible routes, as pydantic models.

Pydantic checks types and shapes; ranges are checked once, by `SamplingParams.validate` and
the engine, so the limits live in one place. Unknown fields are ignored (clients such as
LangChain and Open WebUI send extras like ``user`` or ``metadata``), but fields we know and do
not implement (``tools``, ``response_format``, ``logit_bias``, ``echo``, ...) are refused with
a 400 naming them, rather than silently dropped.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from vexel_core.sampling.params import MAX_LOGPROBS, SamplingParams
from vexel_core.server.errors import bad_request


class _Body(BaseModel):
    model_config = ConfigDict(extra="ignore")


class StreamOptions(_Body):
    include_usage: bool = False


class GenerationBody(_Body):
    """What chat and completions requests share."""

    model: str | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    presence_penalty: float | None = None
    frequency_penalty: float | None = None
    seed: int | None = None
    stop: Any = None  # a string or a list of them; checked in stop_strings for a clear error
    n: int = 1
    stream: bool = False
    stream_options: StreamOptions | None = None
    logit_bias: dict[str, float] | None = None
    # Extensions that llama.cpp's and vLLM's servers accept under the same names.
    top_k: int | None = None
    min_p: float | None = None
    repetition_penalty: float | None = None
    ignore_eos: bool = False
    stop_token_ids: list[int] = Field(default_factory=list)
    return_token_ids: bool = False

    def check_supported(self) -> None:
        """Refuse what we know and do not implement, naming the field."""
        if self.logit_bias:
            raise bad_request("logit_bias is not supported", param="logit_bias")
        if self.stream_options is not None and not self.stream:
            raise bad_request("stream_options is only allowed when stream is true",
                              param="stream_options")

    def sampling(self, logprobs: int | None) -> SamplingParams:
        """The sampling parameters, validated (a `RequestError` names the field)."""
        given: dict[str, Any] = {
            "temperature": self.temperature, "top_p": self.top_p, "top_k": self.top_k,
            "min_p": self.min_p, "repetition_penalty": self.repetition_penalty,
            "presence_penalty": self.presence_penalty,
            "frequency_penalty": self.frequency_penalty, "seed": self.seed,
        }
        params = SamplingParams(logprobs=logprobs,
                                **{k: v for k, v in given.items() if v is not None})
        return params.validate()

    def stop_strings(self) -> list[str]:
        if self.stop is None:
            return []
        if isinstance(self.stop, str):
            return [self.stop]
        if isinstance(self.stop, list) and all(isinstance(s, str) for s in self.stop):
            return list(self.stop)
        raise bad_request(f"stop must be a string or a list of strings; got {self.stop!r}",
                          param="stop")

    @property
    def include_usage(self) -> bool:
        return self.stream_options is not None and self.stream_options.include_usage


class ChatCompletionBody(GenerationBody):
    messages: list[dict[str, Any]] = Field(min_length=1)
    max_completion_tokens: int | None = None
    logprobs: bool = False
    top_logprobs: int | None = None
    response_format: dict[str, Any] | None = None
    tools: list[Any] | None = None
    tool_choice: Any = None
    functions: list[Any] | None = None
    function_call: Any = None

    def check_supported(self) -> None:
        super().check_supported()
        if self.response_format is not None and self.response_format.get("type") != "text":
            raise bad_request("response_format is not supported yet (only {\"type\": \"text\"})",
                              param="response_format")
        for name in ("tools", "functions"):
            if getattr(self, name):
                raise bad_request(f"{name} are not supported yet", param=name)
        for name in ("tool_choice", "function_call"):
            if getattr(self, name) not in (None, "none"):
                raise bad_request(f"{name} is not supported yet", param=name)
        if self.top_logprobs is not None and not self.logprobs:
            raise bad_request("top_logprobs needs logprobs set to true", param="top_logprobs")
        if self.top_logprobs is not None and not 0 <= self.top_logprobs <= MAX_LOGPROBS:
            raise bad_request(f"top_logprobs must be between 0 and {MAX_LOGPROBS}; got "
                              f"{self.top_logprobs}", param="top_logprobs")

    def max_new_tokens(self) -> int | None:
        """``max_completion_tokens`` (the current name) or ``max_tokens``; None: no limit."""
        if self.max_completion_tokens is not None:
            return self.max_completion_tokens
        return self.max_tokens

    def logprobs_wanted(self) -> int | None:
        """Alternatives per token the sampler reports, or None for no log-probabilities."""
        if not self.logprobs:
            return None
        return self.top_logprobs or 0


class CompletionBody(GenerationBody):
    prompt: Any  # text, token ids, or a list of either; checked in prompts()
    max_tokens: int | None = 16  # OpenAI's default for completions
    logprobs: int | None = None
    echo: bool = False
    best_of: int | None = None
    suffix: str | None = None

    def check_supported(self) -> None:
        super().check_supported()
        if self.echo:
            raise bad_request("echo is not supported", param="echo")
        if self.suffix:
            raise bad_request("suffix is not supported", param="suffix")
        if self.best_of is not None and self.best_of != self.n:
            raise bad_request("best_of other than n is not supported", param="best_of")

    def prompts(self) -> list[str | list[int]]:
        """The prompts, each text or token ids (a list of prompts gives choices for each)."""
        p = self.prompt
        if _is_prompt(p):
            return [p]
        if isinstance(p, list) and p and all(_is_prompt(q) for q in p):
            return p
        raise bad_request("prompt must be a string, a list of token ids, or a non-empty list "
                          f"of either; got {p!r}"[:300], param="prompt")


def _is_prompt(p: Any) -> bool:
    """Text, or a non-empty list of token ids."""
    return isinstance(p, str) or (isinstance(p, list) and bool(p) and all(
        isinstance(t, int) and not isinstance(t, bool) for t in p))


class TokenizeBody(_Body):
    """vLLM's ``/tokenize``: a text prompt, or chat messages through the template."""

    model: str | None = None
    prompt: str | None = None
    messages: list[dict[str, Any]] | None = None
    add_special_tokens: bool = True
    add_generation_prompt: bool = True

    @model_validator(mode="after")
    def _one_input(self) -> TokenizeBody:
        if (self.prompt is None) == (self.messages is None):
            raise ValueError("give exactly one of prompt and messages")
        return self


class DetokenizeBody(_Body):
    model: str | None = None
    tokens: list[int]
