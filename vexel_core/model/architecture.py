"""The contract between the engine and a model graph.

An architecture plugin registers an `Architecture` under the GGUF ``general.architecture``
value. The engine calls `Architecture.load` once, then calls the returned `CausalLM` with a
flat batch of tokens from many sequences and one `AttentionBatch` describing them; the model
never schedules and never touches the cache except through the attention backend.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import mlx.core as mx
import mlx.nn as nn

if TYPE_CHECKING:
    from vexel_core.attention.base import AttentionBatch
    from vexel_core.gguf.reader import GGUFFile
    from vexel_core.plugins import PluginHost


@dataclass(frozen=True)
class KVSpec:
    """What the KV cache must hold for a model: per layer, KV heads and head size."""

    n_layers: int
    n_kv_heads: int
    head_dim: int
    context_len: int  # the model's trained context (``<arch>.context_length``)
    dtype: mx.Dtype = mx.float16


class CausalLM(nn.Module):
    """A model graph. Subclasses set `kv_spec` and implement `__call__`."""

    kv_spec: KVSpec
    vocab_size: int

    def __call__(self, tokens: mx.array, batch: AttentionBatch) -> mx.array:
        """``tokens[T]`` (int32, flat over sequences) -> logits ``[R, V]``, a row for each of
        ``batch.logits_rows`` (for each of the T tokens when that is None).

        Positions, cache slots and which rows need logits all come from *batch*.
        """
        raise NotImplementedError

    def set_context_len(self, n: int) -> None:
        """The engine runs sequences of at most *n* tokens. Most models ignore this; LongRoPE
        (Phi-3) picks its rotary factors by it, as llama.cpp does with its context size."""

    def compile_decode(self, max_rows: int) -> None:
        """The model may replay compiled graphs for decode steps (one new token per sequence,
        each row sampled) of at most *max_rows* sequences; 0: never. Models may ignore this."""

    def pace_steps_over(self, tokens: int | None) -> None:
        """Steps of more than *tokens* tokens should evaluate as they are built, a layer at a
        time, so that their activations are not all alive at once (`vexel_core.memory`);
        None: never. Models may ignore this."""


class Architecture(Protocol):
    """Builds a `CausalLM` from a GGUF file. Registered by ``register_architectures``."""

    def load(self, gguf: GGUFFile, host: PluginHost) -> CausalLM: ...
