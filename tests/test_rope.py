"""`RoPE.by_hand` (the path small models take on CUDA, where MLX's fused rope cannot launch
for fewer than 32 rotated features and many tokens) equals MLX's fused rope, on every device.

Both compute in float32, in different orders: angles up to 1000 radians carry ~6e-5 radians
of rounding per operation (a float32 ulp there), so a rotated feature (|x| up to ~4) may move
by ~5e-4. A wrong pairing, sign or frequency moves features by O(1).

Also the projection's side of the rotation: what `Attention.project` hands a backend.
"""

from __future__ import annotations

import mlx.core as mx
import numpy as np
import pytest

from vexel_core.model.layers import Attention, AttentionOptions, RoPE
from vexel_core.model.linear import Linear
from vexel_core.quant.weights import DenseWeight


@pytest.mark.parametrize("interleaved", [True, False])
@pytest.mark.parametrize(("dims", "head_dim"), [(16, 16), (8, 16), (64, 64), (32, 80)])
@pytest.mark.parametrize("with_freqs", [False, True])
def test_rope_by_hand_equals_the_fused_kernel(interleaved, dims, head_dim, with_freqs, rng) -> None:  # type: ignore[no-untyped-def]
    factors = mx.array(rng.uniform(1.0, 4.0, dims // 2).astype(np.float32))
    rope = (RoPE.with_factors(dims, 10000.0, factors, interleaved=interleaved, scale=0.5)
            if with_freqs else RoPE(dims, base=500000.0, interleaved=interleaved, scale=0.5))
    T = 120  # the fused kernel itself cannot launch on CUDA from 128 tokens (4 heads)
    x = mx.array(rng.standard_normal((T, 4, head_dim)).astype(np.float32))
    positions = mx.array(rng.permutation(2000)[:T].astype(np.int32))  # any order
    fused = mx.fast.rope(x[:, :, None, :], dims, traditional=interleaved,
                         base=None if with_freqs else rope.base, scale=0.5, offset=positions,
                         freqs=rope.freqs)[:, :, 0, :]
    np.testing.assert_allclose(np.array(rope.by_hand(x, positions)), np.array(fused),
                               rtol=0, atol=5e-4)


@pytest.mark.parametrize("fused", ["qkv", "qk", "none"])
def test_projection_gives_the_heads_rotated_and_unrotated(fused, rng) -> None:  # type: ignore[no-untyped-def]
    """`Attention.project`: q and k rotated at the positions; the same q and k unrotated,
    with the `Rotation` a kernel applies to them (frequencies, pairing); and, where the q/k/v
    product is fused, the one array q, k and v lie in (q's heads, k's, v's: `heads`), which
    the paged decode kernel reads instead of three slices. q and k fused with v apart (v of
    another format) give q and k as slices of their product. Float32 products of 32 columns:
    1e-5 relative covers the products' summation order; the heads are slices, so exact."""
    hq, hkv, d, cols, T = 4, 2, 16, 32, 5
    w = [mx.array(rng.standard_normal((n * d, cols)).astype(np.float32)) for n in (hq, hkv, hkv)]
    rope = RoPE(d, base=10000.0, interleaved=False)
    out = Linear(DenseWeight(mx.zeros((cols, hq * d))))
    opts = AttentionOptions(n_heads=hq, n_kv_heads=hkv, head_dim=d)
    q, k, v = (Linear(DenseWeight(m)) for m in w)
    projections = {"qkv": {"qkv": Linear(DenseWeight(mx.concatenate(w)))},
                   "qk": {"qk": Linear(DenseWeight(mx.concatenate(w[:2]))), "v": v},
                   "none": {"q": q, "k": k, "v": v}}[fused]
    attn = Attention(0, opts, rope, out, **projections)
    x = mx.array(rng.standard_normal((T, cols)).astype(np.float32))
    positions = mx.arange(7, 7 + T, dtype=mx.int32)
    got = attn.project(x, positions)
    want = [np.array(x @ m.T).reshape(T, -1, d) for m in w]
    assert got.unrotated is not None
    for name, a, b in (("q", got.unrotated.q, want[0]), ("k", got.unrotated.k, want[1]),
                       ("v", got.v, want[2])):
        np.testing.assert_allclose(np.array(a), b, rtol=1e-5, atol=1e-5, err_msg=name)
    for name, a, b in (("q", got.q, want[0]), ("k", got.k, want[1])):
        np.testing.assert_allclose(np.array(a), np.array(rope.by_hand(mx.array(b), positions)),
                                   rtol=1e-5, atol=1e-4, err_msg=f"rotated {name}")
    rotation = got.unrotated.rotation
    assert (rotation.dims, rotation.interleaved, rotation.scale) == (d, False, 1.0)
    np.testing.assert_allclose(np.array(rotation.inv_freq),
                               1.0 / np.array(rope.wavelengths()), rtol=1e-6)
    heads = got.unrotated.heads
    if fused != "qkv":
        assert heads is None
        return
    assert heads is not None and heads.shape == (T, hq + 2 * hkv, d)
    for a, b in ((got.unrotated.q, heads[:, :hq]), (got.unrotated.k, heads[:, hq:hq + hkv]),
                 (got.v, heads[:, hq + hkv:])):
        np.testing.assert_array_equal(np.array(a), np.array(b))


def test_attention_refuses_an_incomplete_set_of_projections() -> None:
    opts = AttentionOptions(n_heads=2, n_kv_heads=1, head_dim=4)
    lin = Linear(DenseWeight(mx.zeros((4, 8))))
    for given in ({"q": lin, "k": lin}, {"qk": lin}, {"q": lin, "v": lin}, {}):
        with pytest.raises(ValueError, match="needs q, k and v projections"):
            Attention(0, opts, None, lin, **given)
