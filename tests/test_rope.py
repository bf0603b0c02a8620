"""`RoPE.by_hand` (the path small models take on CUDA, where MLX's fused rope cannot launch
for fewer than 32 rotated features and many tokens) equals MLX's fused rope, on every device.

Both compute in float32, in different orders: angles up to 1000 radians carry ~6e-5 radians
of rounding per operation (a float32 ulp there), so a rotated feature (|x| up to ~4) may move
by ~5e-4. A wrong pairing, sign or frequency moves features by O(1).
"""

from __future__ import annotations

import mlx.core as mx
import numpy as np
import pytest

from vexel_core.model.layers import RoPE


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
