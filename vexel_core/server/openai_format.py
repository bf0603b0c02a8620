"""Engine outputs as OpenAI response objects: whole responses, stream chunks, usage, logprobs.

`ChatFormat` writes ``chat.completion`` / ``chat.completion.chunk`` objects, `CompletionFormat`
the legacy ``text_completion`` ones. Both follow one HTTP request from its first output to its
usage, and both speak the same small protocol the SSE layer drives: `opening_chunks`,
`chunks(output)`, `closing_chunks`; `response(outputs)` builds the non-streamed body.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from vexel_core.engine import FinishReason, RequestOutput
from vexel_core.engine.request import TokenLogprob
from vexel_core.tokenizer import Tokenizer

# OpenAI reports the log-probability of an impossible token as -9999 (JSON has no -inf).
_LOGPROB_FLOOR = -9999.0


@dataclass
class _Choice:
    """What one choice has produced so far."""

    index: int
    prompt_ids: list[int]
    text: list[str] = field(default_factory=list)
    token_ids: list[int] = field(default_factory=list)
    logprobs: list[TokenLogprob] = field(default_factory=list)
    finish_reason: str | None = None


class _Format:
    """What chat and completions responses share: ids, choices, usage and logprob filtering.

    *prompts* maps each engine request id to its prompt's token ids, in choice order (a
    completions request with several prompts has ``n`` choices per prompt). *stop_ids* are the
    tokens that end a sequence without being part of the answer: their log-probability is
    not reported, as OpenAI does not report its end-of-turn token.
    """

    object_name: str
    chunk_object_name: str

    def __init__(self, response_id: str, model: str, tokenizer: Tokenizer,
                 prompts: dict[str, list[int]], *, n: int, stop_ids: Iterable[int] = (),
                 logprobs: bool = False, return_token_ids: bool = False,
                 include_usage: bool = False) -> None:
        self.id = response_id
        self.model = model
        self.created = int(time.time())
        self.tokenizer = tokenizer
        self.offsets = {rid: i * n for i, rid in enumerate(prompts)}
        self.stop_ids = frozenset(stop_ids)
        self.want_logprobs = logprobs
        self.return_token_ids = return_token_ids
        self.include_usage = include_usage
        self.choices = [_Choice(self.offsets[rid] + k, ids)
                        for rid, ids in prompts.items() for k in range(n)]
        self._prompt_tokens: dict[str, tuple[int, int]] = {}  # request id -> (tokens, cached)
        self._completion_tokens = 0

    # -- accounting ---------------------------------------------------------------------
    def _record(self, out: RequestOutput) -> tuple[_Choice, list[TokenLogprob]]:
        """Add *out* to its choice; return the choice and the logprobs worth reporting."""
        choice = self.choices[self.offsets[out.request_id] + out.index]
        choice.token_ids += out.token_ids
        entries = list(out.logprobs or [])
        if (out.finish_reason is FinishReason.STOP and out.token_ids
                and out.token_ids[-1] in self.stop_ids and entries):
            entries.pop()
        choice.logprobs += entries
        choice.text.append(out.text)
        if out.finished:
            choice.finish_reason = out.finish_reason.value  # type: ignore[union-attr]
            self._completion_tokens += out.num_output_tokens
            # n choices share one prompt: count it once (with its best prefix-cache hit)
            _, cached = self._prompt_tokens.get(out.request_id, (0, 0))
            self._prompt_tokens[out.request_id] = (out.num_prompt_tokens,
                                                   max(cached, out.num_cached_tokens))
        return choice, entries

    def usage(self) -> dict[str, Any]:
        prompt = sum(t for t, _ in self._prompt_tokens.values())
        cached = sum(c for _, c in self._prompt_tokens.values())
        return {
            "prompt_tokens": prompt,
            "completion_tokens": self._completion_tokens,
            "total_tokens": prompt + self._completion_tokens,
            "prompt_tokens_details": {"cached_tokens": cached},
        }

    def _envelope(self, object_name: str, choices: list[dict[str, Any]]) -> dict[str, Any]:
        return {"id": self.id, "object": object_name, "created": self.created,
                "model": self.model, "system_fingerprint": None, "choices": choices}

    def _chunk(self, choices: list[dict[str, Any]]) -> dict[str, Any]:
        chunk = self._envelope(self.chunk_object_name, choices)
        if self.include_usage:  # OpenAI: null on every chunk but the last when usage is asked
            chunk["usage"] = None
        return chunk

    # -- the protocol the routes and the SSE layer use ------------------------------------
    def opening_chunks(self) -> list[dict[str, Any]]:
        return []

    def chunks(self, out: RequestOutput) -> list[dict[str, Any]]:
        choice, entries = self._record(out)
        if not out.text and not entries and not out.finished:
            return []  # a token whose text is still held back (partial character, stop string)
        return [self._chunk([self._choice_delta(choice, out, entries)])]

    def closing_chunks(self) -> list[dict[str, Any]]:
        if not self.include_usage:
            return []
        return [{**self._envelope(self.chunk_object_name, []), "usage": self.usage()}]

    def response(self, outputs: Iterable[RequestOutput]) -> dict[str, Any]:
        for out in outputs:
            self._record(out)
        body = self._envelope(self.object_name, [self._whole_choice(c) for c in self.choices])
        body["usage"] = self.usage()
        return body

    def _choice_delta(self, choice: _Choice, out: RequestOutput,
                      entries: list[TokenLogprob]) -> dict[str, Any]:
        raise NotImplementedError

    def _whole_choice(self, choice: _Choice) -> dict[str, Any]:
        raise NotImplementedError

    def _token_ids(self, target: dict[str, Any], token_ids: list[int]) -> dict[str, Any]:
        if self.return_token_ids:
            target["token_ids"] = token_ids
        return target

    # -- logprobs ----------------------------------------------------------------------
    def _token_text(self, token_id: int) -> str:
        return self.tokenizer.piece(token_id)

    def _chat_logprob(self, token_id: int, logprob: float) -> dict[str, Any]:
        return {"token": self._token_text(token_id), "logprob": max(logprob, _LOGPROB_FLOOR),
                "bytes": list(self.tokenizer.token_bytes(token_id))}


class ChatFormat(_Format):
    object_name = "chat.completion"
    chunk_object_name = "chat.completion.chunk"

    def response(self, outputs: Iterable[RequestOutput]) -> dict[str, Any]:
        body = super().response(outputs)
        if self.return_token_ids:  # vLLM's extension: the one prompt's ids, at the top
            body["prompt_token_ids"] = self.choices[0].prompt_ids
        return body

    def opening_chunks(self) -> list[dict[str, Any]]:
        """The assistant role first, before any token (clients show who is typing)."""
        return [self._chunk([{"index": c.index, "delta": {"role": "assistant", "content": ""},
                              "logprobs": None, "finish_reason": None}])
                for c in self.choices]

    def _choice_delta(self, choice: _Choice, out: RequestOutput,
                      entries: list[TokenLogprob]) -> dict[str, Any]:
        delta = {"content": out.text} if out.text or not out.finished else {}
        return self._token_ids({
            "index": choice.index, "delta": delta,
            "logprobs": self._logprobs(entries) if self.want_logprobs else None,
            "finish_reason": out.finish_reason.value if out.finish_reason else None,
        }, out.token_ids)

    def _whole_choice(self, choice: _Choice) -> dict[str, Any]:
        return self._token_ids({
            "index": choice.index,
            "message": {"role": "assistant", "content": "".join(choice.text)},
            "logprobs": self._logprobs(choice.logprobs) if self.want_logprobs else None,
            "finish_reason": choice.finish_reason,
        }, choice.token_ids)

    def _logprobs(self, entries: list[TokenLogprob]) -> dict[str, Any]:
        return {"content": [
            {**self._chat_logprob(e.token_id, e.logprob),
             "top_logprobs": [self._chat_logprob(t, lp) for t, lp in e.top]}
            for e in entries]}


class CompletionFormat(_Format):
    object_name = "text_completion"
    chunk_object_name = "text_completion"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._text_offset = [0] * len(self.choices)  # for the legacy logprobs' text_offset

    def _choice_delta(self, choice: _Choice, out: RequestOutput,
                      entries: list[TokenLogprob]) -> dict[str, Any]:
        return self._token_ids({
            "index": choice.index, "text": out.text,
            "logprobs": self._logprobs(choice.index, entries) if self.want_logprobs else None,
            "finish_reason": out.finish_reason.value if out.finish_reason else None,
        }, out.token_ids)

    def _whole_choice(self, choice: _Choice) -> dict[str, Any]:
        return self._token_ids({
            "index": choice.index, "text": "".join(choice.text),
            "logprobs": (self._logprobs(choice.index, choice.logprobs)
                         if self.want_logprobs else None),
            "finish_reason": choice.finish_reason,
            **({"prompt_token_ids": choice.prompt_ids} if self.return_token_ids else {}),
        }, choice.token_ids)

    def _logprobs(self, index: int, entries: list[TokenLogprob]) -> dict[str, Any]:
        """The legacy shape: parallel lists of tokens, their logprobs, alternatives, offsets."""
        tokens, offsets = [], []
        for e in entries:
            text = self._token_text(e.token_id)
            tokens.append(text)
            offsets.append(self._text_offset[index])
            self._text_offset[index] += len(text)
        return {
            "tokens": tokens,
            "token_logprobs": [max(e.logprob, _LOGPROB_FLOOR) for e in entries],
            "top_logprobs": [{self._token_text(t): max(lp, _LOGPROB_FLOOR) for t, lp in e.top}
                             for e in entries],
            "text_offset": offsets,
        }
