"""The preallocated key/value storage: one pool per layer, addressed by flat slot.

Slot ``b * block_size + i`` is token ``i`` of block ``b``. The pool knows nothing of
sequences; `BlockManager` decides which blocks a sequence owns, and the attention backends
read and write through block tables and slot mappings.
"""

from __future__ import annotations

import mlx.core as mx

from vexel_core.model.architecture import KVSpec


class KVPool:
    def __init__(self, spec: KVSpec, num_blocks: int, block_size: int) -> None:
        self.spec = spec
        self.num_blocks = num_blocks
        self.block_size = block_size
        shape = (num_blocks * block_size, spec.n_kv_heads, spec.head_dim)
        self.k = [mx.zeros(shape, dtype=spec.dtype) for _ in range(spec.n_layers)]
        self.v = [mx.zeros(shape, dtype=spec.dtype) for _ in range(spec.n_layers)]
        mx.eval(self.k, self.v)

    @staticmethod
    def bytes_per_block(spec: KVSpec, block_size: int) -> int:
        return 2 * spec.n_layers * block_size * spec.n_kv_heads * spec.head_dim * spec.dtype.size

    @property
    def nbytes(self) -> int:
        return self.num_blocks * self.bytes_per_block(self.spec, self.block_size)

    def write(self, layer: int, slots: mx.array, k: mx.array, v: mx.array) -> None:
        """Store ``k``/``v`` ``[T, Hkv, D]`` at ``slots[T]``."""
        self.k[layer][slots] = k.astype(self.spec.dtype)
        self.v[layer][slots] = v.astype(self.spec.dtype)

    def gather(self, layer: int, block_tables: mx.array) -> tuple[mx.array, mx.array]:
        """Keys and values of whole blocks: ``block_tables[B, nb]`` -> ``[B, nb*bs, Hkv, D]``."""
        B, nb = block_tables.shape
        idx = (block_tables[:, :, None] * self.block_size
               + mx.arange(self.block_size, dtype=mx.int32)[None, None, :]).reshape(B, -1)
        return self.k[layer][idx], self.v[layer][idx]

    def copy_blocks(self, pairs: list[tuple[int, int]]) -> None:
        """Copy-on-write: duplicate block ``src`` into ``dst`` in every layer."""
        if not pairs:
            return
        bs = self.block_size
        src = mx.array([s * bs + i for s, _ in pairs for i in range(bs)], dtype=mx.int32)
        dst = mx.array([d * bs + i for _, d in pairs for i in range(bs)], dtype=mx.int32)
        for layer in range(self.spec.n_layers):
            self.k[layer][dst] = self.k[layer][src]
            self.v[layer][dst] = self.v[layer][src]
