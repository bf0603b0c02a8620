"""Requests, the sequences they become, and what the engine streams back."""

from __future__ import annotations

import enum
import itertools
import time
from dataclasses import dataclass, field

from vexel_core.kvcache.blocks import BlockTable
from vexel_core.sampling.params import SamplingParams

_seq_ids = itertools.count()


class FinishReason(str, enum.Enum):
    STOP = "stop"  # a stop token or stop string
    LENGTH = "length"  # max_tokens or the context length
    ABORT = "abort"  # cancelled by the caller


@dataclass
class GenerationRequest:
    """One call to the engine: a tokenized prompt and how to continue it."""

    request_id: str
    prompt_ids: list[int]
    sampling: SamplingParams = field(default_factory=SamplingParams)
    max_tokens: int = 256
    stop: list[str] = field(default_factory=list)
    stop_token_ids: list[int] = field(default_factory=list)
    ignore_eos: bool = False
    n: int = 1
    arrival: float = field(default_factory=time.monotonic)


@dataclass
class TokenLogprob:
    token_id: int
    logprob: float
    top: list[tuple[int, float]] = field(default_factory=list)


@dataclass
class RequestOutput:
    """A streamed increment of one sequence (choice ``index``) of a request."""

    request_id: str
    index: int
    token_ids: list[int]
    text: str
    logprobs: list[TokenLogprob] | None = None
    finish_reason: FinishReason | None = None
    num_prompt_tokens: int = 0
    num_cached_tokens: int = 0
    num_output_tokens: int = 0

    @property
    def finished(self) -> bool:
        return self.finish_reason is not None


class SeqStatus(enum.Enum):
    WAITING = "waiting"
    RUNNING = "running"
    FINISHED = "finished"


@dataclass(eq=False)
class Sequence:
    """One stream of tokens: the prompt plus what was generated, and its KV blocks.

    ``num_computed`` tokens have keys and values in the cache. A preempted sequence keeps
    its output and is recomputed from scratch (prompt + output) when readmitted.
    """

    request: GenerationRequest
    index: int
    output_ids: list[int] = field(default_factory=list)
    table: BlockTable = field(default_factory=BlockTable)
    num_computed: int = 0
    status: SeqStatus = SeqStatus.WAITING
    seq_id: int = field(default_factory=lambda: next(_seq_ids))
    admitted_order: int = -1
    num_cached_tokens: int = 0  # prompt tokens served by the prefix cache
    # Siblings (``n > 1``) this sequence forks at its first sample; the scheduler keeps
    # their seats in the batch from admission on.
    unforked: int = 0
    first_token_time: float | None = None
    last_token_time: float | None = None

    @property
    def prompt_ids(self) -> list[int]:
        return self.request.prompt_ids

    @property
    def num_tokens(self) -> int:
        return len(self.request.prompt_ids) + len(self.output_ids)

    def token_ids(self) -> list[int]:
        return self.request.prompt_ids + self.output_ids

    def tokens(self, start: int, count: int) -> list[int]:
        """Tokens ``start .. start + count`` without concatenating the whole sequence."""
        prompt = self.request.prompt_ids
        if start >= len(prompt):
            return self.output_ids[start - len(prompt) : start - len(prompt) + count]
        return (prompt + self.output_ids)[start : start + count]


class StopStrings:
    """Finds stop strings in a growing text, holding back a tail that may become one.

    ``feed(delta)`` returns ``(text to emit, stopped)``: the emitted text never contains a
    stop string nor anything after it.
    """

    def __init__(self, stops: list[str]) -> None:
        self.stops = [s for s in stops if s]
        self.longest = max((len(s) for s in self.stops), default=0)
        self.pending = ""

    def feed(self, delta: str) -> tuple[str, bool]:
        if not self.stops:
            return delta, False
        self.pending += delta
        hits = [i for i in (self.pending.find(s) for s in self.stops) if i >= 0]
        if hits:
            out = self.pending[: min(hits)]
            self.pending = ""
            return out, True
        hold = self._partial_suffix()
        out, self.pending = self.pending[: len(self.pending) - hold], self.pending[
            len(self.pending) - hold :]
        return out, False

    def flush(self) -> str:
        out, self.pending = self.pending, ""
        return out

    def _partial_suffix(self) -> int:
        """Length of the longest tail of pending that is a proper prefix of a stop string."""
        text = self.pending
        for n in range(min(len(text), self.longest - 1), 0, -1):
            tail = text[-n:]
            if any(s.startswith(tail) for s in self.stops):
                return n
        return 0
