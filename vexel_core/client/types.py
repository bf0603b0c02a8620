"""What the client returns: typed views of the server's JSON.

Chat and completions answers share these types: a chat message's content and a completion's
text are both `Choice.text`, and both logprob formats become `TokenLogprob` lists.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Model:
    id: str
    created: int
    owned_by: str
    max_model_len: int | None = None

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Model:
        return cls(d["id"], d.get("created", 0), d.get("owned_by", ""), d.get("max_model_len"))


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    cached_tokens: int = 0

    @classmethod
    def from_json(cls, d: dict[str, Any] | None) -> Usage | None:
        if not d:
            return None
        cached = (d.get("prompt_tokens_details") or {}).get("cached_tokens") or 0
        return cls(d["prompt_tokens"], d["completion_tokens"], d["total_tokens"], cached)


@dataclass(frozen=True)
class TokenLogprob:
    """One generated token: its text, log-probability, raw bytes (chat format only) and the
    most likely alternatives as (text, logprob)."""

    token: str
    logprob: float
    bytes: bytes | None = None
    top: list[tuple[str, float]] = field(default_factory=list)


def parse_logprobs(d: dict[str, Any] | None) -> list[TokenLogprob] | None:
    """Either format: chat's ``{"content": [...]}`` or the legacy parallel lists."""
    if not d:
        return None
    if "content" in d:
        return [TokenLogprob(e["token"], e["logprob"],
                             bytes(e["bytes"]) if e.get("bytes") is not None else None,
                             [(t["token"], t["logprob"]) for t in e.get("top_logprobs") or []])
                for e in d["content"] or []]
    tops = d.get("top_logprobs") or [{}] * len(d["tokens"])
    return [TokenLogprob(token, logprob, None, list((top or {}).items()))
            for token, logprob, top in zip(d["tokens"], d["token_logprobs"], tops,
                                               strict=True)]


@dataclass(frozen=True)
class Choice:
    index: int
    text: str
    finish_reason: str | None
    logprobs: list[TokenLogprob] | None = None
    token_ids: list[int] | None = None  # with return_token_ids=True

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Choice:
        text = (d["message"].get("content") or "") if "message" in d else d.get("text", "")
        return cls(d["index"], text, d.get("finish_reason"), parse_logprobs(d.get("logprobs")),
                   d.get("token_ids"))


@dataclass(frozen=True)
class Completion:
    """A whole answer (chat or completions)."""

    id: str
    model: str
    choices: list[Choice]
    usage: Usage | None

    @property
    def text(self) -> str:
        """The first choice's text."""
        return self.choices[0].text

    @property
    def finish_reason(self) -> str | None:
        return self.choices[0].finish_reason

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Completion:
        return cls(d["id"], d["model"], [Choice.from_json(c) for c in d["choices"]],
                   Usage.from_json(d.get("usage")))


@dataclass(frozen=True)
class Delta:
    """A piece of one choice of a streamed answer."""

    index: int
    text: str
    finish_reason: str | None = None
    logprobs: list[TokenLogprob] | None = None
    token_ids: list[int] | None = None

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Delta:
        text = (d["delta"].get("content") or "") if "delta" in d else d.get("text", "")
        return cls(d["index"], text, d.get("finish_reason"), parse_logprobs(d.get("logprobs")),
                   d.get("token_ids"))
