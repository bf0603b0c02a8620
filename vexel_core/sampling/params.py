"""What one request brings to the sampler: its parameters and its history.

`SamplingParams` are the request's knobs (validated against OpenAI's ranges);
`SequenceHistory` is what the sampler remembers about one sequence between steps: the
tokens it has seen (for the penalties) and where its random stream stands.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from vexel_core.errors import RequestError

MAX_LOGPROBS = 20  # OpenAI's top_logprobs limit
_U64 = 2**64


@dataclass(frozen=True)
class SamplingParams:
    """How to pick the next token. The defaults sample from the model's plain distribution.

    max_tokens, stop strings and n belong to the request, not here.
    """

    temperature: float = 1.0
    """0 picks the most likely token (greedy); otherwise logits are divided by it."""
    top_k: int = 0
    """Keep the k most likely tokens; 0 keeps all."""
    top_p: float = 1.0
    """Keep the smallest set of most likely tokens whose probability reaches top_p."""
    min_p: float = 0.0
    """Drop tokens less likely than min_p times the most likely one; 0 keeps all."""
    repetition_penalty: float = 1.0
    """llama.cpp/HF style, over prompt and generated tokens: positive logits are divided by
    it, negative ones multiplied. 1 disables it."""
    frequency_penalty: float = 0.0
    """OpenAI style: subtract ``count * frequency_penalty`` for each generated token."""
    presence_penalty: float = 0.0
    """OpenAI style: subtract ``presence_penalty`` once from each token generated so far."""
    seed: int | None = None
    """Makes the sampled tokens reproducible; None draws a fresh random stream."""
    logprobs: int | None = None
    """None: no log-probabilities. n >= 0: the chosen token's, plus the n most likely."""
    extra: Mapping[str, Any] = field(default_factory=dict)
    """Parameters of processors that plugins add, by name; the core leaves them alone."""

    @property
    def is_greedy(self) -> bool:
        return self.temperature == 0

    def validate(self) -> SamplingParams:
        """Raise `RequestError` naming the first field out of range; return self when valid."""
        _check_range("temperature", self.temperature, 0, 2, "0 means greedy")
        _check_int("top_k", self.top_k, 0, None, "0 disables it")
        _check_range("top_p", self.top_p, 0, 1, "1 disables it", low_open=True)
        _check_range("min_p", self.min_p, 0, 1, "0 disables it")
        _check_range("repetition_penalty", self.repetition_penalty, 0, None, "1 disables it",
                     low_open=True)
        _check_range("frequency_penalty", self.frequency_penalty, -2, 2, "0 disables it")
        _check_range("presence_penalty", self.presence_penalty, -2, 2, "0 disables it")
        if self.seed is not None:
            _check_int("seed", self.seed, -(2**63), _U64 - 1, "or null for a random seed")
        if self.logprobs is not None:
            _check_int("logprobs", self.logprobs, 0, MAX_LOGPROBS,
                       "the number of alternatives to return, or null")
        if not isinstance(self.extra, Mapping) or not all(isinstance(k, str) for k in self.extra):
            raise RequestError("extra must map parameter names to values", param="extra")
        return self


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _check_range(name: str, value: Any, low: float, high: float | None, note: str,
                 *, low_open: bool = False) -> None:
    if high is None:
        allowed = f"greater than {low}" if low_open else f"at least {low}"
    else:
        allowed = f"greater than {low} and at most {high}" if low_open else (
            f"between {low} and {high}")
    ok = _is_number(value) and math.isfinite(value)
    if ok:
        ok = (value > low if low_open else value >= low) and (high is None or value <= high)
    if not ok:
        raise RequestError(f"{name} must be a number {allowed} ({note}); got {value!r}",
                           param=name)


def _check_int(name: str, value: Any, low: int, high: int | None, note: str) -> None:
    ok = isinstance(value, int) and not isinstance(value, bool)
    ok = ok and value >= low and (high is None or value <= high)
    if not ok:
        allowed = f"at least {low}" if high is None else f"between {low} and {high}"
        raise RequestError(f"{name} must be an integer {allowed} ({note}); got {value!r}",
                           param=name)


class SequenceHistory:
    """The tokens one sequence has seen and its random stream.

    The random key of each step is derived from the seed, the sample index and the number of
    tokens generated so far — not from a global generator — so a seeded sequence draws the
    same tokens whatever else shares its batch, and a step repeated after a rollback
    (speculative decoding) draws the same noise again.

    *sample_index* tells apart the n choices of one request that share a seed.
    """

    def __init__(self, prompt_ids: Iterable[int], seed: int | None = None, *,
                 sample_index: int = 0) -> None:
        self.prompt_ids: list[int] = list(prompt_ids)
        self.generated_ids: list[int] = []
        self.seed = seed
        # token -> times generated, for every token seen (prompt tokens start at 0): the
        # repetition penalty reads the keys, frequency and presence penalties the counts.
        self._counts: dict[int, int] = dict.fromkeys(self.prompt_ids, 0)
        self._prompt_tokens = frozenset(self.prompt_ids)
        # SeedSequence mixes (seed, index) into 64 well-spread bits; no seed: OS entropy.
        entropy = None if seed is None else [seed % _U64, sample_index]
        self._stream = np.random.SeedSequence(entropy).generate_state(2, dtype=np.uint32)

    @property
    def num_generated(self) -> int:
        return len(self.generated_ids)

    def append(self, token_id: int) -> None:
        """Record a token the sequence has accepted."""
        self.generated_ids.append(token_id)
        self._counts[token_id] = self._counts.get(token_id, 0) + 1

    def rollback(self, n: int) -> None:
        """Forget the last *n* generated tokens (rejected speculative tokens)."""
        if not 0 <= n <= len(self.generated_ids):
            raise ValueError(f"cannot roll back {n} of {len(self.generated_ids)} tokens")
        for token_id in self.generated_ids[len(self.generated_ids) - n:]:
            self._counts[token_id] -= 1
            if self._counts[token_id] == 0 and token_id not in self._prompt_tokens:
                del self._counts[token_id]
        del self.generated_ids[len(self.generated_ids) - n:]

    def token_counts(self) -> tuple[np.ndarray, np.ndarray]:
        """Every token seen (int32) and how often each was generated (float32)."""
        n = len(self._counts)
        return (np.fromiter(self._counts.keys(), np.int32, n),
                np.fromiter(self._counts.values(), np.float32, n))

    def step_key(self, ahead: int = 0) -> np.ndarray:
        """The MLX random key (uint32[2]) of the next step (*ahead* more steps on, when
        the engine samples before the previous token has come back to the host).

        The step number goes into the key's low word; Threefry, MLX's generator, is a cipher
        keyed by it, so neighbouring steps give unrelated noise.
        """
        step = (self.num_generated + ahead) % 2**32
        return self._stream ^ np.array([0, step], np.uint32)
