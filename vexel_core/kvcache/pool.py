"""The preallocated key/value storage: one pool per layer, addressed by flat slot.

Slot ``b * block_size + i`` is token ``i`` of block ``b``. The pool knows nothing of
sequences; `BlockManager` decides which blocks a sequence owns, and the attention backends
read and write through block tables and slot mappings.

Writes, two ways:
- **on the CPU, a scatter**: ``pool[slots] = k`` gives a new pool array, which replaces the
  old one (MLX's arrays are values);
- **on a GPU, in place** (`vexel_core.kvcache.kernels.cache_write`, or inside the paged decode
  kernel of a decode step, `wrote`): one launch per layer
  instead of two scatters, and never a copy of the pool (a scatter may reuse the old pool's
  memory only while nothing else holds it; MLX holds what a launched kernel reads until the
  GPU has run it). One request decoded ~8% faster on the H200 (152.6 and 159.2 tok/s against
  143.8 and 142.7 with the scatter, alternating in one call; notes/engine-gpu.md, session 5).

  Writing arrays that MLX believes immutable is safe here because: the pool arrays are
  allocated once and always referenced by this object (so MLX never hands their memory to
  another array); every kernel that reads a pool takes the latest write's token as an input
  (`read_token`), which orders it after the write in MLX's CUDA graph (edges follow the
  arrays a kernel reads); a step is built only after the step before it was launched on the
  same stream, which runs launches in order; and a step writes only slots that no earlier,
  possibly still running, step reads (new tokens, or blocks freed only after the steps that
  read them finished).
"""

from __future__ import annotations

import copy as _copy
from collections.abc import Sequence

import mlx.core as mx

from vexel_core import gpu
from vexel_core.gpu import kernel_backend
from vexel_core.kvcache import kernels
from vexel_core.model.architecture import KVSpec


class KVPool:
    def __init__(self, spec: KVSpec, num_blocks: int, block_size: int,
                 in_place: bool | None = None) -> None:
        """*in_place*: write with the GPU kernel (default: where one runs)."""
        self.spec = spec
        self.num_blocks = num_blocks
        self.block_size = block_size
        self.backend = kernel_backend() if in_place is not False else None
        if in_place and self.backend is None:
            raise ValueError("in-place cache writes need a GPU kernel backend")
        shape = (num_blocks * block_size, spec.n_kv_heads, spec.head_dim)
        self.k = [mx.zeros(shape, dtype=spec.dtype) for _ in range(spec.n_layers)]
        self.v = [mx.zeros(shape, dtype=spec.dtype) for _ in range(spec.n_layers)]
        # per layer, the token of the latest in-place write (int32, element 0)
        self._tokens = [mx.zeros(gpu.TOKEN_SHAPE, dtype=mx.int32) for _ in range(spec.n_layers)]
        mx.eval(self.k, self.v, self._tokens)

    @property
    def in_place(self) -> bool:
        return self.backend is not None

    @staticmethod
    def bytes_per_block(spec: KVSpec, block_size: int) -> int:
        return 2 * spec.n_layers * block_size * spec.n_kv_heads * spec.head_dim * spec.dtype.size

    @property
    def nbytes(self) -> int:
        return self.num_blocks * self.bytes_per_block(self.spec, self.block_size)

    def write(self, layer: int, slots: mx.array, k: mx.array, v: mx.array) -> None:
        """Store ``k``/``v`` ``[T, Hkv, D]`` at ``slots[T]``."""
        if self.backend is not None:
            self._tokens[layer] = kernels.cache_write(
                k, v, slots, self.k[layer], self.v[layer], self._tokens[layer],
                backend=self.backend)
        else:
            self.k[layer][slots] = k.astype(self.spec.dtype)
            self.v[layer][slots] = v.astype(self.spec.dtype)

    def wrote(self, layer: int, token: mx.array) -> None:
        """Another kernel wrote *layer*'s pools in place (the paged decode of a decode step,
        `attention.kernels.paged_decode_writing`, given `read_token` as its *after*): its
        token orders the pools' next readers and writers after that write."""
        if self.backend is None:
            raise ValueError("KVPool.wrote: this pool is not written in place")
        self._tokens[layer] = token

    def read_token(self, layer: int) -> mx.array:
        """int32 (`gpu.TOKEN_SHAPE`), zero: a kernel that reads *layer*'s pools takes it as an
        input, so that it runs after the writes made so far (only in-place writes need it)."""
        return self._tokens[layer]

    def written(self, layer: int) -> list[mx.array]:
        """What evaluates *layer*'s writes so far (for `mx.depends` and step launches)."""
        if self.backend is not None:
            return [self._tokens[layer]]
        return [self.k[layer], self.v[layer]]

    def all_written(self) -> list[mx.array]:
        return [a for layer in range(self.spec.n_layers) for a in self.written(layer)]

    def state(self) -> list[mx.array]:
        """What a step replaces: each layer's write token, and where writes are scatters (not
        in place) each layer's keys, then values."""
        return [*self._tokens] if self.in_place else [*self._tokens, *self.k, *self.v]

    def replica(self, state: Sequence[mx.array]) -> KVPool:
        """This pool with *state* (as `state` orders it) in place of those arrays: what a
        compiled step (`DecoderLM`) writes through while it is traced, *state* being the
        trace's inputs; the replica's `state` is then the step's outputs, for `adopt`. (Pools
        written in place stay this pool's arrays: their writes need no output.)"""
        replica = _copy.copy(self)
        replica.adopt(state)
        return replica

    def adopt(self, state: Sequence[mx.array]) -> None:
        """Take *state* (ordered as `state` orders it) as this pool's."""
        n = self.spec.n_layers
        self._tokens = list(state[:n])
        if not self.in_place:
            self.k, self.v = list(state[n:2 * n]), list(state[2 * n:3 * n])

    def gather(self, layer: int, block_tables: mx.array) -> tuple[mx.array, mx.array]:
        """Keys and values of whole blocks: ``block_tables[B, nb]`` -> ``[B, nb*bs, Hkv, D]``."""
        B, nb = block_tables.shape
        idx = (block_tables[:, :, None] * self.block_size
               + mx.arange(self.block_size, dtype=mx.int32)[None, None, :]).reshape(B, -1)
        idx = self._after_writes(layer, idx)
        return self.k[layer][idx], self.v[layer][idx]

    def copy_blocks(self, pairs: list[tuple[int, int]]) -> None:
        """Copy-on-write: duplicate block ``src`` into ``dst`` in every layer."""
        if not pairs:
            return
        bs = self.block_size
        src = mx.array([s * bs + i for s, _ in pairs for i in range(bs)], dtype=mx.int32)
        dst = mx.array([d * bs + i for _, d in pairs for i in range(bs)], dtype=mx.int32)
        for layer in range(self.spec.n_layers):
            rows = self._after_writes(layer, src)
            self.write(layer, dst, self.k[layer][rows], self.v[layer][rows])

    def _after_writes(self, layer: int, idx: mx.array) -> mx.array:
        """*idx* for a gather from *layer*'s pools that must see the in-place writes so far:
        adding the (zero) token makes the gather depend on them."""
        return idx + self._tokens[layer][:1] if self.backend is not None else idx
