"""Block manager: allocation, copy-on-write, prefix caching, eviction, trimming."""

from __future__ import annotations

import random

import pytest

from vexel_core.kvcache.blocks import BlockManager, OutOfBlocks


def test_allocate_and_free_returns_every_block() -> None:
    bm = BlockManager(8, 4)
    t = bm.match_prefix([1, 2, 3])
    bm.allocate(t, 10)  # 3 blocks
    assert len(t.blocks) == 3 and bm.num_free == 5
    assert bm.slots(t, 0, 5) == [t.blocks[0] * 4 + i for i in range(4)] + [t.blocks[1] * 4]
    bm.free(t)
    assert bm.num_free == 8 and all(r == 0 for r in bm.refs)


def test_out_of_blocks_changes_nothing() -> None:
    bm = BlockManager(2, 4)
    t = bm.match_prefix([])
    bm.allocate(t, 5)
    with pytest.raises(OutOfBlocks):
        bm.allocate(t, 4)
    assert t.num_tokens == 5 and len(t.blocks) == 2


def test_fork_shares_and_copy_on_write_copies_only_the_partial_block() -> None:
    bm = BlockManager(8, 4)
    parent = bm.match_prefix([])
    bm.allocate(parent, 6)  # one full block, one half block
    child = bm.fork(parent)
    assert child.blocks == parent.blocks and bm.num_used == 2
    copies = bm.allocate(child, 1)  # writes into the shared half block
    assert copies == [(parent.blocks[1], child.blocks[1])]
    assert child.blocks[0] == parent.blocks[0] and child.blocks[1] != parent.blocks[1]
    assert bm.allocate(parent, 1) == []  # the parent owns its half block alone now
    bm.free(parent)
    bm.free(child)
    assert bm.num_free == 8


def test_prefix_cache_hits_full_blocks_and_keeps_the_last_token_uncached() -> None:
    bm = BlockManager(16, 4)
    prompt = list(range(100, 113))  # 3 full blocks + 1 token
    a = bm.match_prefix(prompt)
    assert a.num_tokens == 0
    bm.allocate(a, len(prompt))
    bm.cache_full_blocks(a, prompt)
    b = bm.match_prefix(prompt)
    assert b.blocks == a.blocks[:3] and b.num_tokens == 12
    assert bm.stats.prefix_hits == 3
    exact = bm.match_prefix(prompt[:12])  # the last token must be computed
    assert exact.num_tokens == 8
    other = bm.match_prefix([7] + prompt[1:])  # differs in block 0: no hit at all
    assert other.num_tokens == 0
    for t in (a, b, exact, other):
        bm.free(t)
    assert bm.num_free == 16


def test_cached_blocks_are_evicted_lru_only_when_needed() -> None:
    bm = BlockManager(4, 2)
    prompt = [1, 2, 3, 4, 5]
    a = bm.match_prefix(prompt)
    bm.allocate(a, 5)
    bm.cache_full_blocks(a, prompt)
    bm.free(a)
    assert bm.num_free == 4  # cached blocks count as free
    b = bm.match_prefix(prompt)
    assert b.num_tokens == 4  # still cached
    bm.free(b)
    c = bm.match_prefix([9])
    bm.allocate(c, 8)  # needs every block: evicts the cached ones
    assert bm.match_prefix(prompt).num_tokens == 0
    bm.free(c)


def test_trim_releases_tail_blocks_and_unnames_a_rewritten_block() -> None:
    bm = BlockManager(8, 4)
    toks = list(range(12))
    t = bm.match_prefix(toks)
    bm.allocate(t, 12)
    bm.cache_full_blocks(t, toks)
    bm.trim(t, 6)
    assert len(t.blocks) == 2 and t.num_tokens == 6 and len(t.hashes) == 1
    assert bm.match_prefix(toks + [0]).num_tokens == 4  # block 1 lost its name
    bm.free(t)


def test_random_operations_never_leak() -> None:
    rng = random.Random(0)
    bm = BlockManager(32, 4)
    live = []
    for _ in range(2000):
        op = rng.random()
        if op < 0.4 or not live:
            toks = [rng.randrange(3) for _ in range(rng.randrange(1, 20))]
            t = bm.match_prefix(toks)
            try:
                bm.allocate(t, len(toks) - t.num_tokens)
                bm.cache_full_blocks(t, toks)
                live.append((t, toks))
            except OutOfBlocks:
                bm.free(t)
        elif op < 0.55:
            t, toks = rng.choice(live)
            live.append((bm.fork(t), list(toks)))
        elif op < 0.75:
            t, toks = rng.choice(live)
            try:
                bm.allocate(t, 1)
                toks.append(rng.randrange(3))
                bm.cache_full_blocks(t, toks)
            except OutOfBlocks:
                pass
        elif op < 0.85:
            t, toks = rng.choice(live)
            keep = rng.randrange(0, t.num_tokens + 1)
            bm.trim(t, keep)
            del toks[keep:]
        else:
            t, _ = live.pop(rng.randrange(len(live)))
            bm.free(t)
        owned = {}
        for t, _ in live:
            for blk in t.blocks:
                owned[blk] = owned.get(blk, 0) + 1
        assert all(bm.refs[b] == n for b, n in owned.items())
        assert bm.num_used == len(owned)
    for t, _ in live:
        bm.free(t)
    assert bm.num_free == 32 and all(r == 0 for r in bm.refs)
