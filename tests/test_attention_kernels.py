"""Paged decode attention: the GPU kernel (on the GPU machine) and the reference path (here)
against a float64 numpy computation, on fresh random pools, shuffled block tables, GQA,
head sizes 64/80/128/256, soft-cap and sliding window, with the output poisoned first."""

from __future__ import annotations

import mlx.core as mx
import numpy as np
import pytest

from vexel_core.attention import kernels
from vexel_core.attention.backends import attend_by_hand

BS = 16


def numpy_attention(q, k_pool, v_pool, tables, ctx, scale, softcap, window):  # type: ignore[no-untyped-def]
    B, Hq, D = q.shape
    Hkv = k_pool.shape[1]
    out = np.zeros((B, Hq, D))
    for b in range(B):
        slots = [tables[b][t // BS] * BS + t % BS for t in range(ctx[b])]
        first = max(0, ctx[b] - window) if window else 0
        slots = slots[first:]
        for h in range(Hq):
            kv = h // (Hq // Hkv)
            s = (k_pool[slots, kv].astype(np.float64) @ q[b, h].astype(np.float64)) * scale
            if softcap:
                s = softcap * np.tanh(s / softcap)
            p = np.exp(s - s.max())
            out[b, h] = p @ v_pool[slots, kv].astype(np.float64) / p.sum()
    return out


def reference_decode(q, k_pool, v_pool, tables, ctx, scale, softcap, window):  # type: ignore[no-untyped-def]
    """The CPU path: gather whole blocks, mask, attend by hand."""
    B = q.shape[0]
    idx = (tables[:, :, None] * BS + mx.arange(BS)[None, None, :]).reshape(B, -1)
    keys, values = k_pool[idx].swapaxes(1, 2), v_pool[idx].swapaxes(1, 2)
    j = mx.arange(idx.shape[1])[None, :]
    mask = j < ctx[:, None]
    if window:
        mask = mask & (j >= ctx[:, None] - window)
    out = attend_by_hand(q[:, :, None, :], keys, values, mask[:, None, None, :], scale, softcap)
    return out[:, :, 0, :]


CASES = [  # (batch, Hq, Hkv, D, context lengths, softcap, window)
    (3, 4, 4, 64, [1, 17, 40], None, None),
    (4, 32, 8, 128, [5, 130, 64, 257], None, None),
    (2, 16, 8, 256, [33, 300], 50.0, 32),  # Gemma 2 heads: soft-cap and window
    (2, 32, 32, 80, [16, 99], None, None),  # Phi-2 heads
    (1, 8, 1, 96, [200], None, 7),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"B{c[0]}-H{c[1]}/{c[2]}-D{c[3]}")
@pytest.mark.parametrize("dtype", [mx.float32, mx.bfloat16])
def test_paged_decode_matches_float64(case, dtype, rng) -> None:  # type: ignore[no-untyped-def]
    B, Hq, Hkv, D, ctx, softcap, window = case
    nb = max(-(-c // BS) for c in ctx)
    n_blocks = B * nb + 5
    perm = rng.permutation(n_blocks)  # blocks of a sequence are scattered over the pool
    tables = perm[: B * nb].reshape(B, nb).astype(np.int32)
    q = rng.standard_normal((B, Hq, D)).astype(np.float32)
    k_pool = rng.standard_normal((n_blocks * BS, Hkv, D)).astype(np.float32)
    v_pool = rng.standard_normal((n_blocks * BS, Hkv, D)).astype(np.float32)
    scale = D**-0.5
    args = [mx.array(a).astype(dtype) for a in (q, k_pool, v_pool)]
    mt, mc = mx.array(tables), mx.array(np.array(ctx, dtype=np.int32))
    if kernels.kernel_backend() is not None:
        got = kernels.paged_decode(*args, mt, mc, block_size=BS, scale=scale, softcap=softcap,
                                   window=window, init_value=float("nan"))
    else:
        got = reference_decode(*args, mt, mc, scale, softcap, window)
    got = np.array(got.astype(mx.float32))
    # Inputs as the kernel saw them (rounded to dtype), reference in float64.
    qr, kr, vr = (np.array(a.astype(mx.float32)) for a in args)
    want = numpy_attention(qr, kr, vr, tables, ctx, scale, softcap, window)
    # float32: summation order only (1e-4 of the output scale); bfloat16: the output is
    # rounded to 8 bits of mantissa (2^-8 relative) plus accumulated rounding.
    tol = 1e-4 if dtype == mx.float32 else 1.6e-2
    assert not np.isnan(got).any()
    np.testing.assert_allclose(got, want, rtol=0, atol=tol * np.abs(want).max())
