"""The attention backends on a mixed step, against float64 numpy: a fresh prompt, a chunk
after a cached prefix and a decoding sequence in one batch, with and without sliding window
and soft-cap. Prefill rows are padded to `bucket_length` inside the backends; this checks
that the padding never reaches a real row."""

from __future__ import annotations

import dataclasses

import mlx.core as mx
import numpy as np
import pytest

from vexel_core.attention.backends import BACKENDS, bucket_length, bucket_representatives
from vexel_core.attention.base import AttentionBatch
from vexel_core.engine.runner import StepArrays, step_arrays
from vexel_core.kvcache.pool import KVPool
from vexel_core.model.architecture import KVSpec

BS = 16
HQ, HKV, D = 4, 2, 16


def test_bucket_length_bounds_shapes_and_waste() -> None:
    lengths = {bucket_length(n) for n in range(1, 8193)}
    assert len(lengths) <= 40  # a few dozen fused-attention plans up to 8k tokens
    for n in range(1, 20000, 7):
        b = bucket_length(n)
        assert b >= n and b % 64 == 0
        assert b - n < max(64, n // 4 + 1)  # at most a quarter more rows past 64


@pytest.mark.parametrize("longest", [1, 16, 64, 65, 500, 512, 2048])
def test_bucket_representatives_reach_every_bucket_once(longest: int) -> None:
    reps = bucket_representatives(longest)
    assert [bucket_length(n) for n in reps] == sorted({bucket_length(n)
                                                       for n in range(1, longest + 1)})
    assert max(reps) == longest


def reference(q, keys, values, positions, scale, softcap, window):  # type: ignore[no-untyped-def]
    """One sequence: queries at *positions* over keys 0..len(keys)-1, float64."""
    out = np.zeros(q.shape)
    for i, p in enumerate(positions):
        first = max(0, p - window + 1) if window else 0
        for h in range(HQ):
            kv = h // (HQ // HKV)
            s = keys[first : p + 1, kv].astype(np.float64) @ q[i, h].astype(np.float64) * scale
            if softcap:
                s = softcap * np.tanh(s / softcap)
            w = np.exp(s - s.max())
            out[i, h] = w @ values[first : p + 1, kv].astype(np.float64) / w.sum()
    return out


@pytest.mark.parametrize("backend", BACKENDS, ids=lambda b: b.name)
@pytest.mark.parametrize(("softcap", "window"), [(None, None), (None, 8), (30.0, None)])
@pytest.mark.parametrize(("cached", "new"), [
    # A fresh (37 new), B 50 cached + 23 new, C 19 cached + 1 new (decoding)
    ([0, 50, 19], [37, 23, 1]),
    # all three decoding: the plan takes the block tables without a gather
    ([40, 19, 70], [1, 1, 1]),
], ids=["mixed", "decodes"])
@pytest.mark.parametrize("one_array", [False, True], ids=["arrays", "views"])
def test_step_matches_float64(backend, softcap, window, cached, new, one_array, rng) -> None:  # type: ignore[no-untyped-def]
    """*one_array*: the step's positions, slots, tables and lengths as the engine's runner
    makes them, views of one array (`step_arrays`); else four arrays of their own."""
    totals = [c + n for c, n in zip(cached, new, strict=True)]
    tables = [list(range(s * 8, s * 8 + 8)) for s in range(3)]  # 8 blocks each, disjoint
    pool = KVPool(KVSpec(1, HKV, D, 1024, mx.float32), 24, BS)
    keys = [rng.standard_normal((t, HKV, D)).astype(np.float32) for t in totals]
    values = [rng.standard_normal((t, HKV, D)).astype(np.float32) for t in totals]

    def slots(s: int, start: int, stop: int) -> list[int]:
        return [tables[s][t // BS] * BS + t % BS for t in range(start, stop)]

    for s, c in enumerate(cached):  # the cached prefixes, written by earlier steps
        if c:
            pool.write(0, mx.array(slots(s, 0, c), dtype=mx.int32),
                       mx.array(keys[s][:c]), mx.array(values[s][:c]))
    q = [rng.standard_normal((n, HQ, D)).astype(np.float32) for n in new]
    positions = [list(range(c, c + n)) for c, n in zip(cached, new, strict=True)]
    flat_slots = sum((slots(s, cached[s], totals[s]) for s in range(3)), [])
    if one_array:
        arrays = step_arrays(sum(positions, []), flat_slots, totals, sum(tables, []), 8)
    else:
        arrays = StepArrays(mx.array(sum(positions, []), dtype=mx.int32),
                            mx.array(flat_slots, dtype=mx.int32), None,
                            mx.array(tables, dtype=mx.int32))
    batch = AttentionBatch(
        pool=pool, backend=backend, positions=arrays.positions, slot_mapping=arrays.slots,
        block_tables=arrays.tables, query_lens=new, context_lens=totals,
        logits_rows=mx.arange(sum(new), dtype=mx.int32), context_array=arrays.context_lens)
    scale = D**-0.5
    new_k = np.concatenate([keys[s][cached[s]:] for s in range(3)])
    new_v = np.concatenate([values[s][cached[s]:] for s in range(3)])
    got = np.array(backend(mx.array(np.concatenate(q)), mx.array(new_k), mx.array(new_v),
                           layer=0, batch=batch, scale=scale, softcap=softcap, window=window))
    want = np.concatenate([reference(q[s], keys[s], values[s], positions[s], scale, softcap,
                                     window) for s in range(3)])
    # float32 throughout: summation order only, 1e-5 of the output's scale
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-5 * np.abs(want).max())
    # the step's keys and values are in the pool for the next steps (a scatter on the CPU; on
    # a GPU the write kernel, or the paged decode kernel itself when every sequence decodes)
    mx.eval(pool.all_written())
    written = np.array(batch.slot_mapping)
    np.testing.assert_array_equal(np.array(pool.k[0])[written], new_k)
    np.testing.assert_array_equal(np.array(pool.v[0])[written], new_v)
    # the plan's lengths: the runner's when every sequence decodes, else its own
    np.testing.assert_array_equal(batch.plan().decode_ctx,
                                  [t for t, n in zip(totals, new, strict=True) if n == 1])
    assert (batch.plan().decode_ctx is batch.context_array) == (one_array and new == [1, 1, 1])
    if new == [1, 1, 1]:  # every sequence decodes: the tables' first 5 blocks (71 tokens)
        np.testing.assert_array_equal(batch.plan().decode_tables, np.array(tables)[:, :5])
        exact = dataclasses.replace(batch, block_tables=batch.block_tables[:, :5], _plan=None)
        assert exact.plan().decode_tables is exact.block_tables  # taken as they are


@pytest.mark.parametrize(("new", "fused"), [([1, 1, 1], True), ([1, 4, 1], False)],
                         ids=["decodes", "mixed"])
def test_paged_backend_fuses_the_cache_write_only_when_every_sequence_decodes(  # type: ignore[no-untyped-def]
        new, fused, monkeypatch) -> None:
    """Which launches the paged backend makes on a GPU (the kernels stand-ins that record
    their calls; the kernels themselves are tested in test_attention_kernels.py): a step in
    which every sequence decodes writes its keys and values inside the decode kernel, at the
    step's slots, and hands the pool that kernel's token; any other step writes first."""
    from vexel_core.attention import backends as backends_module
    from vexel_core.attention import kernels as attention_kernels
    from vexel_core.kvcache import kernels as cache_kernels

    calls: list[tuple[str, object]] = []
    token = mx.array([7], dtype=mx.int32)

    def writing(q, k, v, slots, *args, after, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(("paged_decode_writing", (np.array(slots).tolist(), after)))
        return mx.zeros(q.shape, q.dtype), token

    def decode(q, *args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(("paged_decode", None))
        return mx.zeros(q.shape, q.dtype)

    def write(k, v, slots, *args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(("cache_write", np.array(slots).tolist()))
        return mx.zeros((1,), dtype=mx.int32)

    monkeypatch.setattr(backends_module, "kernel_backend", lambda: "cuda")
    monkeypatch.setattr(attention_kernels, "paged_decode_writing", writing)
    monkeypatch.setattr(attention_kernels, "paged_decode", decode)
    monkeypatch.setattr(attention_kernels, "compile_variants", lambda *args: None)
    monkeypatch.setattr(cache_kernels, "cache_write", write)
    pool = KVPool(KVSpec(1, HKV, D, 1024, mx.float32), 24, BS)
    pool.backend = "cuda"  # as if on a GPU: writes in place, through the stand-ins
    backend = next(b for b in BACKENDS if b.name == "paged")
    cached = [40, 19, 70]
    totals = [c + n for c, n in zip(cached, new, strict=True)]
    tables = [list(range(s * 8, s * 8 + 8)) for s in range(3)]
    slots = [tables[s][t // BS] * BS + t % BS
             for s in range(3) for t in range(cached[s], totals[s])]
    batch = AttentionBatch(
        pool=pool, backend=backend,
        positions=mx.array([t for s in range(3) for t in range(cached[s], totals[s])],
                           dtype=mx.int32),
        slot_mapping=mx.array(slots, dtype=mx.int32),
        block_tables=mx.array(tables, dtype=mx.int32), query_lens=new, context_lens=totals,
        logits_rows=None)
    before = pool.read_token(0)
    T = sum(new)
    backend(mx.zeros((T, HQ, D)), mx.zeros((T, HKV, D)), mx.zeros((T, HKV, D)), layer=0,
            batch=batch, scale=1.0)
    names = [name for name, _ in calls]
    if fused:
        assert names == ["paged_decode_writing"]
        assert calls[0][1] == (slots, before)  # the step's slots, after the last write
        assert pool.read_token(0) is token  # the next readers wait for this kernel
    else:
        assert names[0] == "cache_write" and calls[0][1] == slots
        assert "paged_decode_writing" not in names
