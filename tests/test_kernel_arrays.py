"""The arrays the GPU kernels keep from launch to launch (counts, scratches, constants,
placeholders, ordering tokens) and their tiny outputs are all larger than 8 bytes.

MLX's CUDA allocator serves arrays of 8 bytes or less from one small pool of managed memory
(``small_block_size`` in mlx/backend/cuda/allocator.cpp), which the host's own tiny arrays
share. A kernel that reads such an array reaches it across the bus or faults it back (session
21: a 4-byte eps cost a 512-CTA product ~16 us a launch), and one whose CTAs add to a count
there crosses the bus at every atomic (session 30: a launch of 153 us that takes 18 in device
memory). Nothing here needs a GPU: the sizes are the ones the engine would ask MLX for.
"""

from __future__ import annotations

import math

import mlx.core as mx
import pytest

from vexel_core import gpu
from vexel_core.attention import kernels as attention
from vexel_core.kvcache.pool import KVPool
from vexel_core.model.architecture import KVSpec
from vexel_core.quant.kernels.library import add_norm_scratch, feed_forward_scratch

SMALL_POOL_BYTES = 8  # MLX's small_block_size
DTYPES = [mx.float32, mx.float16, mx.bfloat16]


def out_of_small_pool(a: mx.array) -> bool:
    return a.nbytes > SMALL_POOL_BYTES


@pytest.mark.parametrize("pairs", [1, 2, 3, 8])
def test_the_split_merges_counts(pairs: int) -> None:
    counts = attention._counters(pairs)
    assert out_of_small_pool(counts), f"{pairs} (sequence, KV head) pairs: {counts.nbytes} bytes"
    assert counts.size >= pairs and not counts.any().item()


@pytest.mark.parametrize("dtype", DTYPES)
def test_the_paged_decodes_placeholders(dtype: mx.Dtype) -> None:
    for a in attention._placeholders(dtype):
        assert out_of_small_pool(a), f"a placeholder of {a.shape} {a.dtype}: {a.nbytes} bytes"


def test_constants_and_scratches() -> None:
    arrays = {"float_constant": gpu.float_constant(1e-5),
              "add_norm_scratch": add_norm_scratch(),
              "feed_forward_scratch(1)": feed_forward_scratch(1)}
    for name, a in arrays.items():
        assert out_of_small_pool(a), f"{name}: {a.nbytes} bytes"


@pytest.mark.parametrize("dtype", DTYPES)
def test_the_pools_ordering_tokens(dtype: mx.Dtype) -> None:
    pool = KVPool(KVSpec(2, 1, 8, 64, dtype), 4, 4, in_place=False)
    for layer in range(2):
        assert out_of_small_pool(pool.read_token(layer))


@pytest.mark.parametrize("backend", ["cuda", "metal"])
@pytest.mark.parametrize("splits", [1, 3])
@pytest.mark.parametrize("dtype", DTYPES)
def test_the_paged_decodes_outputs(backend: str, splits: int, dtype: mx.Dtype) -> None:
    # one sequence with one KV head and one query head: every output as small as it gets
    plan = attention._plan(1, 1, 1, 64, dtype, 16, 4, splits, True, True, 0.125, 0.0, 0,
                           (0, False, 0.0, 1.0), (0, 0), backend)
    for shape, out_dtype in zip(plan.output_shapes, plan.output_dtypes, strict=True):
        nbytes = out_dtype.size * math.prod(shape)
        assert nbytes > SMALL_POOL_BYTES, f"output {shape} {out_dtype}: {nbytes} bytes"


def test_the_token_shape_in_any_dtype_of_two_bytes_or_more() -> None:
    assert math.prod(gpu.TOKEN_SHAPE) * 2 > SMALL_POOL_BYTES


def test_the_kernel_variants_compile_one_launch_an_evaluation(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # compile_variants' launches share the counts of one (sequence, KV head) pair. Evaluated
    # together, MLX's CUDA graph ran them at the same time and their interleaved counting left
    # a 1 behind (session 34, H200: test_the_split_merges_counts[1]), from which every later
    # split launch of one pair would merge a span short. Each must be an evaluation alone.
    launches: list[tuple[int, int]] = []
    evaluated: list[tuple[object, ...]] = []

    def launch(*args: object, warps: int, splits: int, **kw: object) -> mx.array:
        launches.append((warps, splits))
        return mx.zeros((1,))

    monkeypatch.setattr(attention, "paged_decode", launch)
    monkeypatch.setattr(mx, "eval", lambda *arrays: evaluated.append(arrays))
    attention.compile_variants.__wrapped__(128, 4, mx.bfloat16, 16, "cuda")
    assert {1, 2} <= {s for _, s in launches} and len({w for w, _ in launches}) > 1
    assert [len(a) for a in evaluated] == [1] * len(launches)
    assert all(isinstance(a[0], mx.array) for a in evaluated)


@pytest.mark.gpu
def test_compiling_the_kernel_variants_leaves_every_count_zero() -> None:
    # The same on the GPU: after every compilation of a shape's variants (several, as the
    # interleaving that left a count behind did not come every time), one pair's counts are
    # zero.
    counts = attention._counters(1)
    for head_dim, rep in [(128, 4), (64, 1), (128, 8)] * 3:
        attention.compile_variants.__wrapped__(head_dim, rep, mx.bfloat16, 16, "cuda")
        mx.synchronize()
        assert not counts.any().item(), (head_dim, rep, counts.tolist())
