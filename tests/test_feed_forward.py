"""A block's gated feed-forward part in one launch (cuda/feed_forward.cuh): h = residual +
down(act(g) * u), [g, u] = gate_up(x), and normed = rms_norm(h) * w, for one row of packed Q4_0,
on fresh random blocks every run.

Judged against float64 arithmetic on what the kernel must compute: its intermediate values are
``gemv_int8``'s gated mode's, bit for bit (the same float32 operations in the same order: the
emulation of that kernel, or the library's launch on the GPU, gives them), rounded to int8 as
the down product rounds its input (`int8_activations`); the down sums then carry float32's
roundings of each block's term and of their sum, bounded below. Paths: ``emulated_cuda``
(the CUDA source compiled for the CPU, NaN-filled outputs) and the H200 (marked ``gpu``).
"""

from __future__ import annotations

import importlib
from pathlib import Path

import mlx.core as mx
import numpy as np
import pytest
from gguf import GGMLQuantizationType as T

from tests import emulation
from tests.test_quant_kernels import (
    FORMATS,
    KERNELS,
    NORM_EPS,
    UNIT_ROUNDOFF,
    Matrix,
    emulated_int8,
    gated_x,
    int8_activations,
    matrix,
    random_raw,
)
from vexel_core.quant.kernels import gpu_backend, library
from vexel_core.quant.kernels.library import (
    GATED_ACTS,
    Int8Tiling,
    feed_forward_counts,
    feed_forward_scratch,
)
from vexel_core.quant.kernels.packed import pack_q4_0
from vexel_core.quant.selection import QuantPath

NAN = float("nan")
# the spacing of each dtype's subnormals: float16's, below 2^-14, are 2^-24 apart, where a
# rounding's error is absolute rather than relative
SUBNORMAL_STEP = {mx.float32: 2.0**-149, mx.bfloat16: 2.0**-133, mx.float16: 2.0**-24}
# (K, F, N): x's length, the intermediate values, h's length. The emulation's instantiated
# shapes (run_feed_forward.cpp): one or two CTAs' worth of warps a slice, N unlike K once.
EMULATED_SHAPES = [(1024, 1024, 1024), (1024, 2048, 1024), (2048, 1024, 768)]
# four sub-blocks a lane: gemv_int8's order for rows of up to 4,096 columns, the kernel's own
INTERMEDIATE_TILING = Int8Tiling(warps=4, stages=2, per_lane=4, ctas=2)


@pytest.fixture(scope="session")
def feed_forward_emulator(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tests/kernel_emulation/run_feed_forward.cpp built against the kernel sources."""
    return emulation.build(tmp_path_factory.mktemp("feed_forward"), "run_feed_forward.cpp",
                           [KERNELS / "cuda", KERNELS / "common"])


def block(k: int, f: int, n: int, dtype: mx.Dtype, rng: np.random.Generator
          ) -> tuple[Matrix, Matrix, mx.array, mx.array, mx.array]:
    """Random gate/up [2F, K] and down [N, F] Q4_0 weights, x scaled as `gated_x`, a
    residual and a norm weight."""
    gate_up, down = matrix(T.Q4_0, rng, cols=k, rows=2 * f), matrix(T.Q4_0, rng, cols=f, rows=n)
    x = gated_x(gate_up, rng, dtype)
    residual = mx.array(rng.normal(size=(1, n)).astype(np.float32) * 30).astype(dtype)
    weight = mx.array(rng.normal(size=(n,)).astype(np.float32)).astype(dtype)
    return gate_up, down, x, residual, weight


def as_float(a: mx.array) -> np.ndarray:
    return np.array(a.astype(mx.float32)).reshape(-1)


def to_dtype(v: np.ndarray, dtype: mx.Dtype) -> np.ndarray:
    """float32 values rounded to *dtype* (to nearest, ties to even), back as float32."""
    return as_float(mx.array(v.astype(np.float32)).astype(dtype))


def check_block(runs: list[tuple[np.ndarray, np.ndarray]], intermediate: mx.array,
                down: Matrix, residual: mx.array, weight: mx.array, dtype: mx.Dtype) -> None:
    """Each run's h and normed against float64 on *intermediate* (the gated product as
    ``gemv_int8`` computes it), and every run the same bits.

    The down sum of a row is one warp's (gemv_packed's order): lane l adds the terms ``dx *
    (d * dot)`` of block l of each of the row's F / 1024 super-blocks into its float32 sum by
    fma, then the 32 lanes' sums are added in a tree of five. A term's product d * dot is one
    rounding, each fma one, each level of the tree one: y within (F / 1024 + 6) u sum|terms|
    of the exact sum (u = 2^-24; two more u below for the float64 reference's own roundings).
    h = T(residual + T(y)) rounds monotonically, so it lies between the roundings of the
    bound's two ends. normed: test_add_norm_epilogue's bound on the run's own h, plus half a
    subnormal step for each of its two roundings to T (the second scaled by w): float16
    results under 2^-14 round in absolute steps (of 768 values, one such is likely)."""
    r = int8_activations(np.array(intermediate.astype(mx.float32)))[0]
    terms = r * down.values  # [N, F], exact in float64 (q * d times a decoded weight)
    exact = terms.sum(axis=1)
    f = down.values.shape[1]
    slack = (f / 1024 + 8) * 2.0**-24 * np.abs(terms).sum(axis=1)
    res = as_float(residual)

    def h_of(y: np.ndarray) -> np.ndarray:
        return to_dtype(res + to_dtype(y, dtype), dtype)  # the kernel's float32 add, then T

    lo, hi = h_of(exact - slack), h_of(exact + slack)
    e = UNIT_ROUNDOFF[dtype]
    for h, normed in runs:
        assert np.isfinite(h).all() and np.isfinite(normed).all()
        assert ((lo <= h) & (h <= hi)).all(), np.abs(h - h_of(exact)).max()
        hd = h.astype(np.float64)
        want = as_float(weight).astype(np.float64) * hd / np.sqrt(np.mean(hd**2) + NORM_EPS)
        w = np.abs(as_float(weight))
        bound = ((2 * e + len(h) * 2.0**-24 + 2.0**-20) * np.abs(want)
                 + SUBNORMAL_STEP[dtype] / 2 * (1 + w))
        assert (np.abs(normed - want) <= bound).all()
    for h, normed in runs[1:]:  # a row's sum is one warp's: the same bits every launch
        np.testing.assert_array_equal(h, runs[0][0])
        np.testing.assert_array_equal(normed, runs[0][1])


def emulated_block(binary: Path, gate_up: Matrix, down: Matrix, x: mx.array,
                   residual: mx.array, weight: mx.array, act: str
                   ) -> tuple[list[tuple[np.ndarray, np.ndarray]], int]:
    """Two launches on one scratch in the emulation: [(h, normed)] as float32, and the
    scratch's nonzero words after them."""
    k, f, n = x.shape[1], gate_up.rows // 2, down.rows
    args = [GATED_ACTS[act], int(x.dtype == mx.bfloat16), k, f, n, NORM_EPS]
    stdin = (pack_q4_0(gate_up.buffer).tobytes() + pack_q4_0(down.buffer).tobytes()
             + b"".join(np.array(a.view(mx.uint8)).tobytes() for a in (x, residual, weight)))
    out = emulation.run(binary, args, stdin)
    values = mx.array(np.frombuffer(out[:-4], np.uint8)).view(x.dtype).reshape(4, n)
    v = np.array(values.astype(mx.float32))
    return [(v[0], v[1]), (v[2], v[3])], int(np.frombuffer(out[-4:], np.uint32)[0])


@pytest.mark.parametrize("act", sorted(GATED_ACTS))
@pytest.mark.parametrize("dtype", [mx.float32, mx.bfloat16], ids=["f32", "bf16"])
@pytest.mark.parametrize("k, f, n", EMULATED_SHAPES, ids=lambda v: str(v))
def test_emulated_feed_forward(k: int, f: int, n: int, dtype: mx.Dtype, act: str,
                               rng: np.random.Generator, emulator: Path,
                               feed_forward_emulator: Path) -> None:
    # every CTA is 256 threads of the CPU: CI's two cores take ~20 s a case, so the other
    # shapes run bf16 with SiLU (float32 differs in the rounding to T, GELU in glu alone,
    # which test_quant_kernels' gated tests judge)
    if (k, f, n) != EMULATED_SHAPES[0] and (dtype, act) != (mx.bfloat16, "silu"):
        pytest.skip("the first shape takes every dtype and activation; the others bf16 SiLU")
    gate_up, down, x, residual, weight = block(k, f, n, dtype, rng)
    intermediate = emulated_int8(emulator, x, gate_up, INTERMEDIATE_TILING, act)
    runs, nonzero = emulated_block(feed_forward_emulator, gate_up, down, x, residual, weight,
                                   act)
    assert nonzero == 0  # the counts and flags left at zero for the next launch
    check_block(runs, intermediate, down, residual, weight, dtype)


def test_scratch_layout_is_the_kernels(feed_forward_emulator: Path) -> None:
    # feed_forward_scratch(F) allocates what cuda/feed_forward.cuh's FeedForwardScratch lays
    # out (a shorter one would let the kernel write past it), and feed_forward_counts reads
    # the words the kernel leaves zero (what feed_forward.py checks after its launches), for
    # every F it takes
    for f in (1024, 2048, 14336, 28672, 32768):
        out = emulation.run(feed_forward_emulator, ["words", f], b"").decode().split()
        words, norm, first, end = map(int, out)
        assert feed_forward_scratch(f).shape == (words,), f
        where = mx.arange(words, dtype=mx.uint32)
        assert np.array(feed_forward_counts(where, f)).tolist() == [norm, *range(first, end)], f


@pytest.mark.gpu
@pytest.mark.parametrize("act", sorted(GATED_ACTS))
@pytest.mark.parametrize("dtype", [mx.float32, mx.bfloat16, mx.float16],
                         ids=["f32", "bf16", "f16"])
# (1024, 32768, 512): 512 CTAs, more than the H200 holds at once (two an SM on 132 SMs), so
# CTAs that wait also compute the slices of CTAs not yet started
@pytest.mark.parametrize("k, f, n", [(4096, 3072, 4096), (1024, 2048, 768), (1024, 32768, 512)],
                         ids=lambda v: str(v))
def test_feed_forward_on_the_gpu(k: int, f: int, n: int, dtype: mx.Dtype, act: str,
                                 rng: np.random.Generator) -> None:
    # The library's launch on poisoned outputs, three times on one scratch (evaluated apart):
    # as the emulated test judges it, the intermediate from gemv_int8's gated mode on the GPU,
    # and the same bits every time although 32-512 CTAs finish in any order.
    if gpu_backend() != "cuda":
        pytest.skip("feed_forward is a CUDA kernel")
    if dtype != mx.bfloat16 and act != "silu":
        pytest.skip("float32 and float16 with SiLU alone (the activation is gemv_int8's)")
    gate_up, down, x, residual, weight = block(k, f, n, dtype, rng)
    lib = library("cuda")
    wgu, wd = mx.array(pack_q4_0(gate_up.buffer)), mx.array(pack_q4_0(down.buffer))
    intermediate = lib.gemv(x, wgu, T.Q4_0, tiling=INTERMEDIATE_TILING, act=act, packed=True)
    scratch, runs = feed_forward_scratch(f), []
    for _ in range(3):
        h, normed = lib.feed_forward(x, wgu, wd, act, residual, weight, NORM_EPS, scratch,
                                     init_value=NAN)
        runs.append((as_float(h), as_float(normed)))
    assert not np.array(feed_forward_counts(scratch, f)).any()
    check_block(runs, intermediate, down, residual, weight, dtype)


@pytest.mark.gpu
def test_gated_mlp_on_the_gpu_equals_the_two_launches(rng: np.random.Generator) -> None:
    # A model's path (RMSNorm.add of a GatedMLP's product: one launch) against the two
    # launches it replaces (the gated product, then the down product's AddNorm), bf16: h
    # within one rounding of each other (the down sums differ by float32's roundings alone),
    # normed within twice the AddNorm test's bound.
    from vexel_core.model.layers import GatedMLP, Product, RMSNorm
    from vexel_core.model.linear import Linear

    if gpu_backend() != "cuda":
        pytest.skip("feed_forward is a CUDA kernel")
    gate_up, down, x, residual, weight = block(4096, 2048, 4096, mx.bfloat16, rng)
    mlp = GatedMLP(Linear(FORMATS[T.Q4_0].load(down.buffer, down.values.shape)),
                   gate_up=Linear(FORMATS[T.Q4_0].load(gate_up.buffer, gate_up.values.shape)))
    assert mlp.down.weight.packed and mlp.gate_up.weight.packed
    norm = RMSNorm(weight, NORM_EPS)
    product = mlp.product(x)
    fused = norm.add(residual, product)
    unfused = norm.add(residual, Product(mlp.down, product.hidden))
    (h1, n1), (h2, n2) = ([as_float(a) for a in pair] for pair in (fused, unfused))
    assert (np.abs(h1 - h2) <= 2.0**-8 * np.abs(h2)).all()
    assert np.mean(h1 == h2) > 0.9
    bound = 2 * (2 * 2.0**-8 + len(h2) * 2.0**-24 + 2.0**-20) * np.abs(n2)
    assert (np.abs(n1 - n2) <= bound + 2.0**-8 * np.abs(n1)).all()


def test_gated_mlp_takes_the_kernel_where_it_applies(
    rng: np.random.Generator, monkeypatch: pytest.MonkeyPatch
) -> None:
    # RMSNorm.add's choice for a GatedMLP's product, off the GPU: with CUDA's kernels
    # pretended (their launches recorded), one row of packed Q4_0 weights without a bias, of
    # an activation the kernels have, is one feed_forward launch; more rows (up to INT8_ROWS,
    # by format and weight size: gemv_int8, its gated mode included; then to 16 gemm_packed),
    # another format, a bias or another activation take the gated product, then the down
    # product's path.
    import mlx.nn as nn

    import vexel_core.quant.kernels as kernels
    import vexel_core.quant.weights as weights
    from vexel_core.model.layers import GatedMLP, RMSNorm
    from vexel_core.model.linear import Linear
    from vexel_core.quant.kernels.library import KernelLibrary

    library_module = importlib.import_module("vexel_core.quant.kernels.library")
    calls: list[str] = []

    def gemv(self: KernelLibrary, x: mx.array, raw: mx.array, ggml_type: T,
             act: str | None = None, **kw: object) -> mx.array:
        calls.append("gated" if act else "gemv")
        rows = raw.shape[0] // 2 if act else raw.shape[0]
        return mx.zeros((x.shape[0], rows), x.dtype)

    def gemm_packed(self: KernelLibrary, x: mx.array, packed: mx.array,
                    act: str | None = None, **kw: object) -> mx.array:
        calls.append("gated_gemm" if act else "gemm_packed")
        return mx.zeros((x.shape[0], packed.shape[0] // (2 if act else 1)), x.dtype)

    def gemv_add_norm(self: KernelLibrary, x: mx.array, raw: mx.array, ggml_type: T,
                      residual: mx.array, *a: object, **kw: object) -> tuple[mx.array, mx.array]:
        calls.append("gemv_add_norm")
        return residual, residual

    def feed_forward(self: KernelLibrary, x: mx.array, gate_up: mx.array, down: mx.array,
                     act: str, residual: mx.array, *a: object, **kw: object
                     ) -> tuple[mx.array, mx.array]:
        calls.append("feed_forward")
        return residual, residual

    monkeypatch.setattr(kernels, "gpu_backend", lambda: "cuda")
    monkeypatch.setattr(weights, "gpu_backend", lambda: "cuda")
    monkeypatch.setattr(weights, "select_for", lambda *a: QuantPath.GGUF_KERNEL)
    monkeypatch.setattr(weights, "paths_on_this_device", lambda t: {QuantPath.GGUF_KERNEL})
    monkeypatch.setattr(weights, "device_resident", lambda a: a)
    monkeypatch.setattr(KernelLibrary, "gemv", gemv)
    monkeypatch.setattr(KernelLibrary, "gemm_packed", gemm_packed)
    monkeypatch.setattr(KernelLibrary, "gemv_add_norm", gemv_add_norm)
    monkeypatch.setattr(KernelLibrary, "feed_forward", feed_forward)
    monkeypatch.setattr("vexel_core.model.layers.kernel_backend", lambda: None)
    hidden, inner = 1024, 1024
    norm = RMSNorm(mx.ones((hidden,), mx.bfloat16), NORM_EPS)
    small_weight = library_module.INT8_SMALL_WEIGHT
    for ggml_type, rows, bias, act, large, expected in [
        (T.Q4_0, 1, False, nn.silu, False, ["feed_forward"]),
        (T.Q4_0, 3, False, nn.silu, True, ["gated_gemm", "gemm_packed"]),  # (bf16 rows)
        (T.Q4_0, 2, False, nn.silu, True, ["gated", "gemv"]),
        (T.Q4_0, 2, False, nn.silu, False, ["gated", "gemv"]),
        (T.Q8_0, 3, False, nn.silu, True, ["gated", "gemv"]),
        (T.Q8_0, 2, False, nn.silu, False, ["gated", "gemv"]),
        (T.Q8_0, 4, False, nn.silu, True, ["gated", "gemv"]),
        (T.Q8_0, 1, False, nn.silu, False, ["gated", "gemv_add_norm"]),
        (T.Q4_0, 1, True, nn.silu, False, ["gated", "gemv"]),
        (T.Q4_0, 1, False, nn.relu, False, ["gemv", "gemv_add_norm"]),
    ]:
        # these weights are small (INT8_ROWS); a large one's routing pretended
        monkeypatch.setattr(library_module, "INT8_SMALL_WEIGHT", 0 if large else small_weight)
        def linear(rows_: int, cols: int, with_bias: bool = False, t: T = ggml_type) -> Linear:
            w = FORMATS[t].load(random_raw(t, rows_, cols, rng), (rows_, cols))
            return Linear(w, mx.zeros((rows_,), mx.bfloat16) if with_bias else None)

        mlp = GatedMLP(linear(hidden, inner, bias), gate_up=linear(2 * inner, hidden), act=act)
        calls.clear()
        h, n = norm.add(mx.ones((rows, hidden), mx.bfloat16),
                        mlp.product(mx.zeros((rows, hidden), mx.bfloat16)))
        mx.eval(h, n)
        assert h.shape == n.shape == (rows, hidden)
        assert calls == expected, (ggml_type, rows, bias, act, large)


def test_feed_forward_names_what_it_expected() -> None:
    # Bad arguments reach no kernel: a ValueError naming the parameter and what it must be
    lib = library("cuda")
    bf = mx.bfloat16
    x, residual, weight = mx.zeros((1, 1024), bf), mx.zeros((1, 1024), bf), mx.zeros((1024,), bf)
    wgu, wd = mx.zeros((2048, 576), mx.uint8), mx.zeros((1024, 576), mx.uint8)
    scratch = feed_forward_scratch(1024)
    good = dict(x=x, gate_up=wgu, down=wd, act="silu", residual=residual, weight=weight,
                eps=NORM_EPS, scratch=scratch)
    for change, message in [
        (dict(x=mx.zeros((2, 1024), bf)), "expected x \\[1, K\\]"),
        (dict(gate_up=mx.zeros((2048, 577), mx.uint8)), "gate_up \\[2F, K / 1024 \\* 576\\]"),
        (dict(down=mx.zeros((1024, 1152), mx.uint8)), "down \\[N, F / 1024 \\* 576\\]"),
        (dict(down=mx.zeros((1024, 576), mx.int8)), "down must be uint8"),
        (dict(act="relu"), "act must be one of"),
        (dict(residual=mx.zeros((1, 1024), mx.float32)), "residual must be \\[1, 1024\\]"),
        (dict(weight=mx.zeros((1023,), bf)), "weight must be \\[1024\\]"),
        (dict(scratch=feed_forward_scratch(2048)), "scratch must be feed_forward_scratch"),
    ]:
        with pytest.raises(ValueError, match=message):
            lib.feed_forward(**{**good, **change})  # type: ignore[arg-type]
