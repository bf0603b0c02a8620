"""Which KV blocks each sequence owns: allocation, sharing, copy-on-write, prefix caching.

Blocks are reference counted. Forked sequences (``n > 1``) and sequences with a common
prompt prefix point at the same blocks; the first write into a shared, partly filled block
copies it first. A full block is named by the hash of its tokens and of the block before it,
so a later prompt that starts the same way reuses the computed keys and values. Blocks whose
last owner has gone stay cached under that name until the pool needs them (least recently
used first).
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np


@dataclass
class BlockTable:
    """One sequence's blocks, and how many token slots in them hold (or will hold) KV."""

    blocks: list[int] = field(default_factory=list)
    num_tokens: int = 0
    hashes: list[bytes] = field(default_factory=list)  # of the leading full blocks


@dataclass
class BlockStats:
    prefix_queries: int = 0  # full prompt blocks looked up
    prefix_hits: int = 0  # of those, found in the cache
    cow_copies: int = 0


class OutOfBlocks(Exception):
    """Internal: not enough free blocks; the scheduler preempts and retries."""


def block_hash(parent: bytes, tokens: list[int] | np.ndarray) -> bytes:
    data = np.asarray(tokens, dtype=np.int64).tobytes()
    return hashlib.blake2b(parent + data, digest_size=16).digest()


class BlockManager:
    def __init__(self, num_blocks: int, block_size: int, *, prefix_cache: bool = True) -> None:
        if num_blocks < 1:
            raise ValueError("the KV pool needs at least one block")
        self.num_blocks = num_blocks
        self.block_size = block_size
        self.prefix_cache = prefix_cache
        self.refs = [0] * num_blocks
        self._free: list[int] = list(range(num_blocks - 1, -1, -1))  # pop() gives 0 first
        self._evictable: OrderedDict[int, None] = OrderedDict()  # ref 0, hashed; LRU first
        self._hash_of: dict[int, bytes] = {}
        self._by_hash: dict[bytes, int] = {}
        self.stats = BlockStats()

    # -- capacity -----------------------------------------------------------------------
    @property
    def num_free(self) -> int:
        """Blocks that can be handed out now (free, or cached and unused)."""
        return len(self._free) + len(self._evictable)

    @property
    def num_used(self) -> int:
        return self.num_blocks - self.num_free

    def blocks_needed(self, table: BlockTable, new_tokens: int) -> int:
        """Blocks `allocate` would take for *new_tokens* more tokens (copy-on-write included)."""
        total = -(-(table.num_tokens + new_tokens) // self.block_size)
        need = max(0, total - len(table.blocks))
        if new_tokens and self._last_block_shared(table):
            need += 1
        return need

    # -- sequences ----------------------------------------------------------------------
    def match_prefix(self, tokens: list[int]) -> BlockTable:
        """A table holding the cached full blocks that *tokens* starts with.

        The last token is never covered: its logits are needed, so it must be computed.
        """
        table = BlockTable()
        if not self.prefix_cache:
            return table
        parent = b""
        for start in range(0, len(tokens) - 1 - self.block_size + 1, self.block_size):
            h = block_hash(parent, tokens[start : start + self.block_size])
            self.stats.prefix_queries += 1
            block = self._by_hash.get(h)
            if block is None:
                break
            self.stats.prefix_hits += 1
            self._acquire(block)
            table.blocks.append(block)
            table.hashes.append(h)
            table.num_tokens += self.block_size
            parent = h
        return table

    def allocate(self, table: BlockTable, new_tokens: int) -> list[tuple[int, int]]:
        """Make room for *new_tokens* more tokens; returns (src, dst) block copies to do.

        Raises `OutOfBlocks` (changing nothing) when the pool cannot supply them.
        """
        if self.blocks_needed(table, new_tokens) > self.num_free:
            raise OutOfBlocks
        copies = []
        if new_tokens and self._last_block_shared(table):
            src = table.blocks[-1]
            dst = self._take()
            table.blocks[-1] = dst
            self._release(src)
            copies.append((src, dst))
            self.stats.cow_copies += 1
        total = -(-(table.num_tokens + new_tokens) // self.block_size)
        while len(table.blocks) < total:
            table.blocks.append(self._take())
        table.num_tokens += new_tokens
        return copies

    def slots(self, table: BlockTable, start: int, count: int) -> list[int]:
        bs = self.block_size
        return [table.blocks[p // bs] * bs + p % bs for p in range(start, start + count)]

    def cache_full_blocks(self, table: BlockTable, tokens: list[int]) -> None:
        """Name the blocks that *tokens* (the sequence so far, computed) fills completely."""
        if not self.prefix_cache:
            return
        full = min(len(tokens), table.num_tokens) // self.block_size
        parent = table.hashes[-1] if table.hashes else b""
        for i in range(len(table.hashes), full):
            h = block_hash(parent, tokens[i * self.block_size : (i + 1) * self.block_size])
            block = table.blocks[i]
            if h not in self._by_hash and block not in self._hash_of:
                self._by_hash[h] = block
                self._hash_of[block] = h
            table.hashes.append(h)
            parent = h

    def fork(self, table: BlockTable) -> BlockTable:
        """A new table sharing every block of *table* (``n > 1``, beam-like forks)."""
        for b in table.blocks:
            self._acquire(b)
        return BlockTable(list(table.blocks), table.num_tokens, list(table.hashes))

    def trim(self, table: BlockTable, num_tokens: int) -> None:
        """Forget tokens past *num_tokens*: rejected speculative tokens (for the speculators
        to come, plugins/vexel_spec), a probe step's allocation in the benchmarks. A
        copy-on-write swap that `allocate` made is not undone."""
        if num_tokens >= table.num_tokens:
            return
        keep = -(-num_tokens // self.block_size)
        for b in reversed(table.blocks[keep:]):
            self._release(b)
        del table.blocks[keep:]
        table.num_tokens = num_tokens
        full = num_tokens // self.block_size
        del table.hashes[full:]
        if num_tokens % self.block_size and table.blocks:
            last = table.blocks[-1]
            if self.refs[last] == 1:  # we own it and will overwrite it: it loses its name
                self._unhash(last)

    def free(self, table: BlockTable) -> None:
        # Last blocks first, so the cache evicts a prompt's tail before its head.
        for b in reversed(table.blocks):
            self._release(b)
        table.blocks.clear()
        table.hashes.clear()
        table.num_tokens = 0

    # -- internals ----------------------------------------------------------------------
    def _last_block_shared(self, table: BlockTable) -> bool:
        partial = table.num_tokens % self.block_size != 0
        if not table.blocks or not partial:
            return False
        return self.refs[table.blocks[-1]] > 1

    def _take(self) -> int:
        if self._free:
            block = self._free.pop()
        elif self._evictable:
            block, _ = self._evictable.popitem(last=False)
            self._unhash(block)
        else:
            raise OutOfBlocks
        self.refs[block] = 1
        return block

    def _acquire(self, block: int) -> None:
        if self.refs[block] == 0:
            self._evictable.pop(block, None)
        self.refs[block] += 1

    def _release(self, block: int) -> None:
        self.refs[block] -= 1
        assert self.refs[block] >= 0, f"block {block} released more often than taken"
        if self.refs[block] == 0:
            if block in self._hash_of:
                self._evictable[block] = None
            else:
                self._free.append(block)

    def _unhash(self, block: int) -> None:
        h = self._hash_of.pop(block, None)
        if h is not None and self._by_hash.get(h) == block:
            del self._by_hash[h]
