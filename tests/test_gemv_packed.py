"""The one-row product of repacked Q4_0 on x rounded beforehand (cuda/gemv_packed.cuh), on
fresh random blocks every run, against float64 arithmetic on x as it was rounded, and bit for
bit against ``gemv_int8`` on the file's blocks (the same integers and the same float32
operations in the same order, so any difference is a kernel bug).

Paths as in test_quant_kernels: ``emulated_cuda`` (the CUDA source compiled for the CPU,
NaN-filled outputs) and ``gguf_kernel`` (the H200, marked ``gpu``). Shapes are awkward on
purpose: rows not a multiple of any tiling's warps or CTAs; rows of one super-block, of three
(a partial pass of four) and of five (a whole pass and a partial one), as Llama's
14,336 columns are three whole passes and a partial one.
"""

from __future__ import annotations

from pathlib import Path

import mlx.core as mx
import numpy as np
import pytest
from gguf import GGMLQuantizationType as T

from tests import emulation
from tests.test_quant_kernels import (
    EMULATED_PAIRS,
    GLU,
    KERNELS,
    Matrix,
    emulated_int8,
    float32_bound,
    gated_x,
    glu_bound,
    int8_activations,
    matrix,
    rounded_x_reference,
)
from vexel_core.quant.kernels import gpu_backend, library
from vexel_core.quant.kernels.library import GATED_ACTS, Int8Tiling, PackedTiling
from vexel_core.quant.kernels.packed import pack_q4_0

COLUMNS = [1024, 3072, 5120]
NAN = float("nan")
TILINGS = [(8, 4, 3), (2, 3, 2)]  # (warps, super-blocks a pass, CTAs)


@pytest.fixture(scope="session")
def packed_emulator(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tests/kernel_emulation/run_packed.cpp built against the kernel sources."""
    return emulation.build(tmp_path_factory.mktemp("packed"), "run_packed.cpp",
                           [KERNELS / "cuda", KERNELS / "common"])


def emulated_packed(binary: Path, x: mx.array, m: Matrix, warps: int, per_pass: int,
                    ctas: int, act: str | None = None) -> np.ndarray:
    """The kernel in the emulation, y as float32 ``[outputs]`` (bf16 x: bf16 y)."""
    assert m.skip == 0
    xf = np.array(x.astype(mx.float32))[0]
    args = [warps, per_pass, GATED_ACTS[act] if act else 0, int(x.dtype == mx.bfloat16), ctas,
            m.rows, m.buffer.shape[1]]
    out = emulation.run(binary, args,
                        pack_q4_0(m.buffer).tobytes() + rounded_x_reference(xf).tobytes())
    if x.dtype == mx.bfloat16:
        return np.array(mx.array(np.frombuffer(out, np.uint16)).view(mx.bfloat16)
                        .astype(mx.float32))
    return np.frombuffer(out, np.float32)


@pytest.mark.parametrize("tiling", TILINGS, ids=lambda t: "/".join(map(str, t)))
@pytest.mark.parametrize("cols", COLUMNS)
@pytest.mark.parametrize("dtype", [mx.float32, mx.bfloat16], ids=["f32", "bf16"])
def test_packed_product_equals_reference(cols: int, dtype: mx.Dtype, tiling: tuple[int, ...],
                                         rng: np.random.Generator,
                                         packed_emulator: Path) -> None:
    # 9 rows on 3 CTAs of 8 warps (some warps idle) or 2 CTAs of 2 warps (3 rows a warp);
    # within float32's bound of x as rounded times the weights, plus a bf16 output's rounding
    m = matrix(T.Q4_0, rng, cols=cols, rows=9)
    x = mx.array(rng.normal(size=(1, cols)).astype(np.float32)).astype(dtype)
    y = emulated_packed(packed_emulator, x, m, *tiling)
    assert np.isfinite(y).all()
    xr = int8_activations(np.array(x.astype(mx.float32)))
    exact = (xr @ m.values.T)[0]
    out_rounding = 2.0**-8 * np.abs(exact) if dtype == mx.bfloat16 else 0.0
    assert (np.abs(y - exact) <= float32_bound(xr, m.values)[0] + out_rounding).all()


@pytest.mark.parametrize("cols", [4096, 5120])
@pytest.mark.parametrize("act", [None, *sorted(GATED_ACTS)])
def test_packed_product_is_gemv_int8_bit_for_bit(cols: int, act: str | None,
                                                 rng: np.random.Generator, packed_emulator: Path,
                                                 emulator: Path) -> None:
    # gemv_int8 with four sub-blocks a lane gives lane l the blocks l, l + 32, ... of a row in
    # that order, as here: the same float32 operations, so the same bits (bf16, gated or not)
    rows = 2 * EMULATED_PAIRS if act else 9
    m = matrix(T.Q4_0, rng, cols=cols, rows=rows)
    x = (gated_x(m, rng, mx.bfloat16) if act
         else mx.array(rng.normal(size=(1, cols)).astype(np.float32)).astype(mx.bfloat16))
    int8 = emulated_int8(emulator, x, m, Int8Tiling(warps=4, stages=2, per_lane=4, ctas=2), act)
    y = emulated_packed(packed_emulator, x, m, 8, 4, 3, act)
    assert np.isfinite(y).all()
    assert np.array_equal(np.array(int8.astype(mx.float32))[0], y)


@pytest.mark.parametrize("act", sorted(GATED_ACTS))
def test_packed_gated_product(act: str, rng: np.random.Generator,
                              packed_emulator: Path) -> None:
    # act(g) * u for pairs of rows of three super-blocks (one partial pass), within
    # glu_bound of float64 arithmetic on x as rounded
    pairs = EMULATED_PAIRS
    m = matrix(T.Q4_0, rng, cols=3072, rows=2 * pairs)
    x = gated_x(m, rng, mx.bfloat16)
    y = emulated_packed(packed_emulator, x, m, 2, 3, 2, act)
    assert y.shape == (pairs,) and np.isfinite(y).all()
    xr = int8_activations(np.array(x.astype(mx.float32)))[0]
    wg, wu = m.values[:pairs], m.values[pairs:]
    g, u = wg @ xr, wu @ xr
    bound = glu_bound(g, u, float32_bound(xr, wg), float32_bound(xr, wu), act, mx.bfloat16)
    assert (np.abs(y - GLU[act](g) * u) <= bound).all()


@pytest.mark.gpu
@pytest.mark.parametrize("tiling", [None, PackedTiling(warps=2, per_pass=3, ctas=2)],
                         ids=["default", "2warps-3-2ctas"])
@pytest.mark.parametrize("cols", COLUMNS)
@pytest.mark.parametrize("act", [None, *sorted(GATED_ACTS)])
@pytest.mark.parametrize("dtype", [mx.float32, mx.bfloat16, mx.float16],
                         ids=["f32", "bf16", "f16"])
def test_packed_product_on_the_gpu(dtype: mx.Dtype, act: str | None, cols: int,
                                   tiling: PackedTiling | None,
                                   rng: np.random.Generator) -> None:
    # The library's launch on a poisoned output (37 rows or pairs) on round_x's copy of the row:
    # bit for bit the product gemv_int8 computes from the file's blocks and the same row (its
    # default tilings give a lane four sub-blocks a chunk, the order here), and within
    # float64's bound on x as rounded.
    if gpu_backend() != "cuda":
        pytest.skip("gemv_packed is a CUDA kernel")
    rows = 2 * 37 if act else 37
    m = matrix(T.Q4_0, rng, cols=cols, rows=rows)
    x = (gated_x(m, rng, dtype) if act
         else mx.array(rng.normal(size=(1, cols)).astype(np.float32)).astype(dtype))
    lib = library("cuda")
    xr = lib.round_x(x)  # (round_x's own tests: test_quant_kernels)
    got = lib.gemv_packed(xr, mx.array(pack_q4_0(m.buffer)), dtype, tiling=tiling, act=act,
                          init_value=NAN)
    assert got.dtype == dtype and got.shape == (1, rows // 2 if act else rows)
    y = np.array(got.astype(mx.float32))[0]
    assert np.isfinite(y).all()
    int8 = lib.gemv(x, m.raw, T.Q4_0, act=act)
    assert np.array_equal(np.array(int8.astype(mx.float32))[0], y)
    if act is None:
        xf = int8_activations(np.array(x.astype(mx.float32)))
        exact = (xf @ m.values.T)[0]
        out_rounding = 0.0 if dtype == mx.float32 else 2.0**-8 * np.abs(exact)
        assert (np.abs(y - exact) <= float32_bound(xf, m.values)[0] + out_rounding).all()


def test_packed_launch_refuses_what_it_cannot_compute() -> None:
    # errors name the parameter and what was expected (planned without a GPU)
    from vexel_core.quant.kernels.library import _packed_launch

    good = ((8, 576), mx.uint8, (1280,), mx.uint8, mx.bfloat16, None, None)
    _packed_launch("cuda", *good)
    with pytest.raises(ValueError, match="CUDA kernel"):
        _packed_launch("metal", *good)
    with pytest.raises(ValueError, match=r"packed must be uint8 \[rows, super-blocks \* 576\]"):
        _packed_launch("cuda", (8, 18 * 32 * 3 + 18), *good[1:])
    with pytest.raises(ValueError, match=r"xr must be uint8 \[1280\]"):
        _packed_launch("cuda", (8, 576), mx.uint8, (1024,), mx.uint8, mx.bfloat16, None, None)
    with pytest.raises(ValueError, match="dtype must be"):
        _packed_launch("cuda", (8, 576), mx.uint8, (1280,), mx.uint8, mx.int32, None, None)
    with pytest.raises(ValueError, match="even number of rows"):
        _packed_launch("cuda", (7, 576), mx.uint8, (1280,), mx.uint8, mx.bfloat16, None,
                       "silu")
