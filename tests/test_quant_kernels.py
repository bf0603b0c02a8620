"""GGUF-native kernels against the reference, on fresh random blocks every run.

Each test body runs on three paths:

* ``gguf_kernel`` (marked ``gpu``): the kernels on MLX's GPU backend, every output buffer
  filled with NaN before the kernel so that an element it never writes fails the test;
* ``emulated_cuda``: the same CUDA sources compiled for the CPU (tests/kernel_emulation: one
  thread per CUDA thread, real barriers and shuffles, NaN-filled outputs), so CI checks the
  kernels' indexing, staging and reductions; needs a C++20 compiler;
* ``emulated_metal``: the Metal sources, which no Apple compiler has seen, wrapped as
  ``mx.fast.metal_kernel`` wraps them and compiled for the CPU the same way
  (`emulation.metal_program`: simdgroups of 32 threads, threadgroup arrays and outputs
  NaN-filled, at most 32 KiB of threadgroup memory), launched as the library plans a Metal
  launch; a syntax-only build checks that they keep Metal's address spaces apart;
* ``reference``: MLX's dequantization to float32, then MLX's matmul.

The judge is float64 arithmetic on `gguf.quants.dequantize`'s values and on the activations as the
path reads them: on CUDA one activation row of Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K or Q6_K is
rounded to int8 per 32-element block (`int8_activations` repeats that rounding exactly), every other
product reads x as it is. Shapes are awkward on purpose: 37 weight rows (9 when emulated; the kernel
takes 4 per CTA), rows of several 1024-element chunks with a partial last one, 1, 3, 8 and 33
activation rows (33: five passes of the 8-row tile), and a weight that starts one row into its
buffer (not 16-byte aligned).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import mlx.core as mx
import mlx.nn as nn
import numpy as np
import pytest
from gguf import GGMLQuantizationType as T
from gguf.quants import dequantize as gguf_dequantize

from tests import emulation
from tests.helpers import benchmark_module
from vexel_core.gpu import cuda_header
from vexel_core.quant.base import WeightTensor, gated
from vexel_core.quant.formats import ALL_FORMATS
from vexel_core.quant.kernels import (
    KERNEL_TYPES,
    GemvTiling,
    gguf_matmul,
    gpu_backend,
    library,
)
from vexel_core.quant.kernels.library import (
    _INPUTS,
    ACTIVATION_TILES,
    CHUNK_ELEMS,
    GATED_ACTS,
    INT8_MAX_COLS,
    INT8_MAX_ROWS,
    INT8_ROWS,
    INT8_TILINGS,
    INT8_TYPES,
    PACKED_TILINGS,
    ROUND_X_THREADS,
    X_ROUNDED,
    Int8Tiling,
    Op,
    XRounded,
    _add_norm_launch,
    _blocks_launch,
    _dequant_launch,
    _feed_forward_launch,
    _gemm_launch,
    _gemv_plan,
    _int8_launch,
    _Launch,
    _packed_launch,
    _round_x_launch,
    _template_type,
    activation_tile,
    add_norm_scratch,
    default_int8_tiling,
    int8_applies,
    kernel_source,
    rounded_x_bytes,
)
from vexel_core.quant.kernels.packed import PACKED_Q4_0, pack_q4_0, unpack_q4_0
from vexel_core.quant.measure import random_raw
from vexel_core.quant.selection import QuantPath, row_bucket, select, select_for

FORMATS = {fmt.ggml_type: fmt for fmt in ALL_FORMATS}
TYPES = sorted(KERNEL_TYPES, key=int)
ROWS = 37
EMULATED_ROWS = 9  # still not a multiple of 4; every CUDA thread is an OS thread there
EMULATED = ("emulated_cuda", "emulated_metal")
# Columns: 7 chunks of 32-element blocks (last one partial), 6 chunks of 256-element blocks.
COLS = {32: 32 * 197, 256: 256 * 23}
PATHS = [pytest.param("gguf_kernel", marks=pytest.mark.gpu), "emulated_cuda", "reference",
         "emulated_metal"]
N_TOKENS = [1, 3, 8, 33]  # activation rows of test_product_equals_reference
HALF_DTYPES = [mx.bfloat16, mx.float16]  # test_half_precision_activations' (on 3 rows)
# test_emulated_kernel_with_other_tilings': ((rows, warps, stages), activation rows)
OTHER_TILINGS = [((1, 2, 3), 1), ((8, 8, 1), 2), ((4, 2, 2), 1)]
OTHER_TILING_TYPES = [T.Q4_0, T.Q8_0, T.Q4_K, T.Q6_K]
NAN = float("nan")
# The packed Q4_0 layout's tests: six 1,024-element super-blocks a row (gemv_int8's default
# chunks of four: one whole, one partial) and these activation rows
PACKED_COLS = 6 * 1024
PACKED_TOKENS = [1, 3, 8]
KERNELS = Path(__file__).parent.parent / "vexel_core" / "quant" / "kernels"


@dataclass
class Matrix:
    """Random blocks of one weight, starting `skip` rows into their buffer, and its values."""

    buffer: np.ndarray  # uint8 [skip + rows, row_bytes]
    skip: int
    ggml_type: T
    values: np.ndarray  # float64 [rows, cols]: gguf's dequantization
    packed: bool = False  # buffer holds Q4_0 repacked (vexel_core.quant.kernels.packed)

    @property
    def raw(self) -> mx.array:
        return mx.array(self.buffer)[self.skip :]

    @property
    def kernel_type(self) -> int:
        """The kernels' GGML_TYPE for these blocks."""
        return _template_type(self.ggml_type, self.packed)

    @property
    def rows(self) -> int:
        return self.values.shape[0]


def matrix(ggml_type: T, rng: np.random.Generator, skip: int = 0, path: str = "",
           cols: int | None = None, rows: int | None = None) -> Matrix:
    cols = cols or COLS[FORMATS[ggml_type].block_elems]
    rows = rows or (EMULATED_ROWS if path in EMULATED else ROWS)
    buffer = random_raw(ggml_type, rows + skip, cols, rng)
    values = gguf_dequantize(buffer[skip:], ggml_type).astype(np.float64)
    assert np.isfinite(values).all()
    return Matrix(buffer, skip, ggml_type, values)


def packed_matrix(rng: np.random.Generator, path: str = "", rows: int | None = None) -> Matrix:
    """A random Q4_0 `matrix` of `PACKED_COLS` columns, its buffer repacked."""
    m = matrix(T.Q4_0, rng, path=path, cols=PACKED_COLS, rows=rows)
    return Matrix(pack_q4_0(m.buffer), m.skip, T.Q4_0, m.values, packed=True)


def check_int8_tiling(path: str, m: Matrix, tiling: Int8Tiling, rng: np.random.Generator,
                      request: pytest.FixtureRequest) -> None:
    """``gemv_int8`` with *tiling* on a random bf16 row of x, against x as the kernel rounds
    it (`int8_activations`) times the weight's values in float64: finite, and within float32's
    bound plus the bf16 output's one rounding (at most 2^-8 of |y|)."""
    xd = mx.array(rng.normal(size=(1, m.values.shape[1])).astype(np.float32)).astype(mx.bfloat16)
    y = np.array(product(path, xd, m, request, tiling).astype(mx.float32))
    assert np.isfinite(y).all(), tiling
    assert within_int8_bound(y, xd, m), tiling


def float32_bound(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Worst-case float32 rounding of length-K dot products: K * 2^-24 * sum|x_j w_j|. The
    weights decode exactly, so this is the only error a correct kernel can have (the
    kernel's summation tree is far shallower than K, so real errors are much smaller)."""
    return x.shape[-1] * 2.0**-24 * (np.abs(x) @ np.abs(w).T)


def within_int8_bound(y: np.ndarray, x: mx.array, m: Matrix) -> bool:
    """Whether *y*, a half-precision ``gemv_int8`` product, is x as the kernel rounds it
    (`int8_activations`) times the weight's values in float64, within float32's bound plus
    y's one rounding (at most 2^-8 of |y|)."""
    xr = int8_activations(np.array(x.astype(mx.float32)))
    exact = xr @ m.values.T
    return bool((np.abs(y - exact) <= float32_bound(xr, m.values) + 2.0**-8 * np.abs(exact)).all())


def int8_blocks(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """*x*'s 32-element blocks as ``gemv_int8`` rounds them (cuda/gemv_int8.cuh, round_block;
    llama.cpp's quantize_q8_1 with ties to even): q = rint(x * (127 / amax)) ``[..., n, 32]``
    (float64 integers) and d = amax / 127 ``[..., n, 1]`` (float32), both divisions
    IEEE-rounded float32, the product exact and rounded half to even."""
    blocks = x.astype(np.float32).reshape(*x.shape[:-1], -1, 32)
    amax = np.abs(blocks).max(axis=-1, keepdims=True)
    with np.errstate(divide="ignore"):
        inv = np.where(amax > 0, np.float32(127) / amax, np.float32(0))
    return np.rint(blocks.astype(np.float64) * inv.astype(np.float64)), amax / np.float32(127)


def int8_activations(x: np.ndarray) -> np.ndarray:
    """*x* as ``gemv_int8`` multiplies it: each 32-element block d * q (`int8_blocks`).
    Repeated exactly, so the kernel is still judged by float32 rounding alone."""
    q, d = int8_blocks(x)
    return (q * d.astype(np.float64)).reshape(x.shape)


def rounded_x_reference(x: np.ndarray) -> np.ndarray:
    """``round_x``'s buffer for one row *x* ``[K]``: q as int8, then d (float32), then each
    block's sum of q (int32), as bytes."""
    q, d = int8_blocks(x)
    return np.concatenate([q.astype(np.int8).view(np.uint8).ravel(),
                           d.astype(np.float32).view(np.uint8).ravel(),
                           q.sum(axis=-1).astype(np.int32).view(np.uint8).ravel()])


def rounds_to_int8(path: str, ggml_type: T, x_rows: int, weight_shape: tuple[int, int]) -> bool:
    """Whether *path* runs this product through ``gemv_int8``: where CUDA's routing sends it
    (`int8_applies`: up to `INT8_ROWS` rows of an `INT8_TYPES` format), on CUDA and in its
    emulation, which repeats what CUDA runs."""
    cuda = path == "emulated_cuda" or (path == "gguf_kernel" and gpu_backend() == "cuda")
    return cuda and int8_applies("cuda", ggml_type, (x_rows, weight_shape[1]), weight_shape[0])


def as_read(path: str, ggml_type: T, x: np.ndarray, weight_rows: int) -> np.ndarray:
    """The activations *path*'s product with a weight of *weight_rows* rows multiplies, in
    float64."""
    if rounds_to_int8(path, ggml_type, x.shape[0], (weight_rows, x.shape[1])):
        return int8_activations(x)
    return x.astype(np.float64)


def as_read_where_selected(ggml_type: T, x: np.ndarray, weight_rows: int) -> np.ndarray:
    """`as_read` for the path this device's selection table gives a weight's product on *x*
    (``BlockWeight.matmul``; x of any leading shape, its rows read as one batch)."""
    path = "gguf_kernel" if select_for(ggml_type, mx.array(x)) is QuantPath.GGUF_KERNEL else ""
    return as_read(path, ggml_type, x.reshape(-1, x.shape[-1]), weight_rows).reshape(x.shape)


def metal_kernel(op: Op, launch: _Launch, input_dtypes: tuple[mx.Dtype, ...]
                 ) -> emulation.MetalKernel:
    """What ``KernelLibrary("metal")`` hands ``mx.fast.metal_kernel`` for *launch* of *op*."""
    header, body = kernel_source("metal", op)
    return emulation.MetalKernel(f"vx_{op}", tuple(_INPUTS[op]), ("y",), body, header,
                                 tuple(launch.template), input_dtypes, (launch.dtype,))


def metal_gemv(m: Matrix, x: mx.array, tiling: tuple[int, int, int] | None = None
               ) -> tuple[emulation.MetalKernel, _Launch]:
    """The Metal product's kernel and launch, with the library's tiling or (rows, warps,
    stages)."""
    op, launch = _gemv_plan("metal", m.ggml_type, tuple(m.raw.shape), mx.uint8, tuple(x.shape),
                            x.dtype, None, GemvTiling(*tiling) if tiling else None,
                            packed=m.packed)
    return metal_kernel(op, launch, (mx.uint8, x.dtype)), launch


def metal_dequant(m: Matrix, dtype: mx.Dtype) -> tuple[emulation.MetalKernel, _Launch]:
    launch = _dequant_launch(m.ggml_type, tuple(m.raw.shape), mx.uint8, dtype, m.packed)
    return metal_kernel("dequant", launch, (mx.uint8,)), launch


def metal_kernels() -> list[emulation.MetalKernel]:
    """Every Metal kernel the tests launch: the product at each test's activation rows and
    dtypes and tilings, dequantization to float32 and bf16 (each instantiation costs compile
    time, so only those)."""
    kernels = []
    for ggml_type in TYPES:
        m = matrix(ggml_type, np.random.default_rng(0), path="emulated_metal")
        cols = m.values.shape[1]
        for rows, dtype in [(n, mx.float32) for n in N_TOKENS] + [(3, d) for d in HALF_DTYPES]:
            kernels.append(metal_gemv(m, mx.zeros((rows, cols), dtype))[0])
        kernels += [metal_dequant(m, dtype)[0] for dtype in (mx.float32, mx.bfloat16)]
        if ggml_type in OTHER_TILING_TYPES:
            kernels += [metal_gemv(m, mx.zeros((rows, cols)), tiling)[0]
                        for tiling, rows in OTHER_TILINGS if tiling != (8, 8, 1)]
    m = packed_matrix(np.random.default_rng(0), path="emulated_metal")
    kernels += [metal_gemv(m, mx.zeros((rows, PACKED_COLS)))[0] for rows in PACKED_TOKENS]
    kernels += [metal_dequant(m, dtype)[0] for dtype in (mx.float32, mx.bfloat16)]
    return kernels


@pytest.fixture(scope="session")
def metal_emulator(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tests/kernel_emulation/run_metal.cpp with `metal_kernels`."""
    return emulation.build_metal(tmp_path_factory.mktemp("metal"), metal_kernels())


def test_metal_sources_keep_address_spaces_apart(tmp_path: Path) -> None:
    # Metal has no generic address space: a threadgroup or device pointer converted to another
    # space does not compile there, while the emulation, where all are plain memory, would run
    # it. Made volatile in turn, each space shows such a conversion as a C++ error.
    errors = emulation.metal_address_space_errors(tmp_path, metal_kernels())
    assert errors == {"threadgroup": "", "device": ""}, "\n".join(errors.values())


def emulated_metal(kernel: emulation.MetalKernel, launch: _Launch, m: Matrix,
                   request: pytest.FixtureRequest, *more: mx.array) -> mx.array:
    """*kernel* in the emulation on the weight (`m.skip` rows into its buffer, as MLX binds a
    view) and *more* inputs, with the library's grid and threadgroup."""
    inputs = [(m.buffer, m.skip * m.buffer.shape[1], tuple(m.raw.shape)),
              *((np.array(a.view(mx.uint8)), 0, tuple(a.shape)) for a in more)]
    return emulation.run_metal(request.getfixturevalue("metal_emulator"), kernel, inputs,
                               launch.grid, launch.threadgroup, launch.shape)


def product(path: str, x: mx.array, m: Matrix, request: pytest.FixtureRequest,
            tiling: tuple[int, int, int] | Int8Tiling | None = None) -> mx.array:
    """``x @ W.T`` by *path*: the matrix-vector kernels (any row count: more than 8 repeats the
    8-row tile; one row of an `INT8_TYPES` format on CUDA is ``gemv_int8``'s) on a poisoned
    output, their emulation, or the reference. An `Int8Tiling` asks for ``gemv_int8`` with
    that tiling, a (rows, warps, stages) tuple the emulation for the float kernel with that
    one."""
    if path == "gguf_kernel":
        backend = gpu_backend()
        assert backend is not None
        chosen = GemvTiling(*tiling) if isinstance(tiling, tuple) else tiling
        return library(backend).gemv(x, m.raw, m.ggml_type, tiling=chosen, init_value=NAN,
                                     packed=m.packed)
    if path == "emulated_cuda":
        binary = request.getfixturevalue("emulator")
        bf16 = x.dtype == mx.bfloat16
        if not bf16 and x.dtype != mx.float32:
            pytest.skip("the emulation runs float32 and bfloat16 activations")
        if isinstance(tiling, Int8Tiling) or (
                tiling is None and rounds_to_int8(path, m.ggml_type, x.shape[0], m.values.shape)):
            t = tiling if isinstance(tiling, Int8Tiling) else default_int8_tiling(
                m.ggml_type, m.values.shape[1], x.shape[0])
            return emulated_int8(binary, x, m, t)
        tile = activation_tile(x.shape[0])
        args = ["gemv", m.kernel_type, tile, *(tiling or (4, 4, 2)), m.rows,
                m.buffer.shape[1], x.shape[0], m.skip, int(bf16)]
        y = np.frombuffer(emulation.run(binary, args, m.buffer.tobytes()
                                        + np.array(x.view(mx.uint8)).tobytes()), np.uint8)
        return mx.array(y).view(x.dtype).reshape(x.shape[0], m.rows)
    if path == "emulated_metal":
        assert not isinstance(tiling, Int8Tiling), "gemv_int8 is a CUDA kernel"
        return emulated_metal(*metal_gemv(m, x, tiling), m, request, x)
    w = FORMATS[m.ggml_type].dequantize_mlx(m.raw)
    return x.astype(mx.float32) @ w.T


def emulated_int8(binary: Path, x: mx.array, m: Matrix, tiling: Int8Tiling,
                  act: str | None = None, offset: int = 0,
                  x_rounded: XRounded | None = None) -> mx.array:
    """``gemv_int8`` in the emulation on float32 or bfloat16 rows (one, or three with the
    default tilings): ``[M, rows]``, or with *act* its gated mode's ``[M, rows / 2]``;
    *offset*: the weight's buffer starts that many bytes past 16-byte alignment. With
    *x_rounded*, x is `round_x`'s buffer (one row) and y bfloat16."""
    outs = m.rows // 2 if act else m.rows
    dtype = mx.bfloat16 if x_rounded else x.dtype
    x_rows = 1 if x_rounded else x.shape[0]
    if x_rows not in (1, 3):
        pytest.skip("the emulation runs one or three activation rows through gemv_int8")
    args = ["gemv_int8", m.kernel_type, tiling.warps, tiling.stages, tiling.per_lane,
            tiling.grid(outs), m.rows, m.buffer.shape[1], m.skip, int(dtype == mx.bfloat16),
            int(tiling.x_in_registers), GATED_ACTS[act] if act else 0, offset,
            X_ROUNDED[x_rounded] if x_rounded else 0, x_rows]
    y = np.frombuffer(emulation.run(binary, args, m.buffer.tobytes()
                                    + np.array(x.view(mx.uint8)).tobytes()), np.uint8)
    return mx.array(y).view(dtype).reshape(x_rows, outs)


def emulated_round_x(binary: Path, x: mx.array) -> np.ndarray:
    """``round_x`` in the emulation on one float32 or bfloat16 row, with the library's grid:
    its buffer's bytes (poisoned with 0xFF first)."""
    launch = _round_x_launch("cuda", tuple(x.shape), x.dtype)
    args = ["round_x", x.shape[1], int(x.dtype == mx.bfloat16),
            launch.grid[0] // launch.threadgroup[0]]
    assert launch.threadgroup[0] == ROUND_X_THREADS
    return np.frombuffer(emulation.run(binary, args, np.array(x.view(mx.uint8)).tobytes()),
                         np.uint8)


def dequantized(path: str, m: Matrix, dtype: mx.Dtype, request: pytest.FixtureRequest) -> mx.array:
    if path == "gguf_kernel":
        backend = gpu_backend()
        assert backend is not None
        return library(backend).dequantize(m.raw, m.ggml_type, dtype, init_value=NAN,
                                           packed=m.packed)
    if path == "emulated_cuda":
        binary = request.getfixturevalue("emulator")
        args = ["dequant", m.kernel_type, m.rows, m.buffer.shape[1], m.skip]
        w = np.frombuffer(emulation.run(binary, args, m.buffer.tobytes()), np.float32)
        w = w.reshape(m.rows, -1)
        return mx.array(w).astype(dtype)  # the emulation writes float32; rounding as the GPU's
    if path == "emulated_metal":
        return emulated_metal(*metal_dequant(m, dtype), m, request)
    return FORMATS[m.ggml_type].dequantize_mlx(m.raw).astype(dtype)


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("n_tokens", N_TOKENS)
@pytest.mark.parametrize("ggml_type", TYPES, ids=lambda t: t.name)
def test_product_equals_reference(
    path: str, ggml_type: T, n_tokens: int, rng: np.random.Generator,
    request: pytest.FixtureRequest,
) -> None:
    m = matrix(ggml_type, rng, path=path)
    x = rng.normal(size=(n_tokens, m.values.shape[1])).astype(np.float32)
    y = np.array(product(path, mx.array(x), m, request))
    assert y.shape == (n_tokens, m.rows) and np.isfinite(y).all()
    xr = as_read(path, ggml_type, x, m.rows)
    assert (np.abs(y - xr @ m.values.T) <= float32_bound(xr, m.values)).all()


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("dtype", HALF_DTYPES, ids=["bf16", "f16"])
@pytest.mark.parametrize("ggml_type", TYPES, ids=lambda t: t.name)
def test_half_precision_activations(
    path: str, ggml_type: T, dtype: mx.Dtype, rng: np.random.Generator,
    request: pytest.FixtureRequest,
) -> None:
    m = matrix(ggml_type, rng, path=path)
    x = mx.array(rng.normal(size=(3, m.values.shape[1])).astype(np.float32)).astype(dtype)
    y = product(path, x, m, request)
    assert y.dtype == (mx.float32 if path == "reference" else dtype)
    # what the kernel multiplies
    xf = as_read(path, ggml_type, np.array(x.astype(mx.float32)), m.rows)
    exact = xf @ m.values.T
    got = np.array(y.astype(mx.float32))
    assert np.isfinite(got).all()
    # Accumulation in float32 as above, then one rounding of the result to the 8-bit (bf16)
    # or 11-bit (f16) mantissa: at most 2^-8 of |y| (half an ulp is 2^-9 or 2^-12).
    assert (np.abs(got - exact) <= float32_bound(xf, m.values) + 2.0**-8 * np.abs(exact)).all()


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("ggml_type", TYPES, ids=lambda t: t.name)
def test_unaligned_weight_buffer(
    path: str, ggml_type: T, rng: np.random.Generator, request: pytest.FixtureRequest
) -> None:
    # One row into the buffer: rows of 18 * 197 bytes (Q4_0) etc. start off 16-byte words.
    m = matrix(ggml_type, rng, skip=1, path=path)
    x = rng.normal(size=(1, m.values.shape[1])).astype(np.float32)
    y = np.array(product(path, mx.array(x), m, request))
    xr = as_read(path, ggml_type, x, m.rows)
    assert (np.abs(y - xr @ m.values.T) <= float32_bound(xr, m.values)).all()
    values = np.array(dequantized(path, m, mx.float32, request))
    np.testing.assert_array_equal(values, m.values.astype(np.float32))


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("ggml_type", TYPES, ids=lambda t: t.name)
def test_dequantize_equals_gguf_bit_for_bit(
    path: str, ggml_type: T, rng: np.random.Generator, request: pytest.FixtureRequest
) -> None:
    # Each value is one rounding of gguf's own exact intermediate, so float32 matches bit for
    # bit and bfloat16 equals gguf's float32 value rounded to nearest even.
    m = matrix(ggml_type, rng, path=path)
    f32 = np.array(dequantized(path, m, mx.float32, request))
    np.testing.assert_array_equal(f32, m.values.astype(np.float32))
    bf16 = dequantized(path, m, mx.bfloat16, request)
    expected = mx.array(m.values.astype(np.float32)).astype(mx.bfloat16)
    assert mx.array_equal(bf16, expected).item()


@pytest.mark.parametrize("path", EMULATED)
@pytest.mark.parametrize("tiling, n_tokens", OTHER_TILINGS,
                         ids=["1row-2warps-3stages", "8rows-8warps-1stage", "cuda-one-row"])
@pytest.mark.parametrize("ggml_type", OTHER_TILING_TYPES, ids=lambda t: t.name)
def test_emulated_kernel_with_other_tilings(
    path: str, ggml_type: T, tiling: tuple[int, int, int], n_tokens: int,
    rng: np.random.Generator, request: pytest.FixtureRequest,
) -> None:
    # Tilings unlike the default: one weight row per CTA with a deeper pipeline, eight rows
    # over eight warps (more warps than a row has chunks) with a single stage, and CUDA's
    # default for one activation row (`default_tiling`). On Metal, stages rotate buffers
    # (the library's one stage never does).
    if path == "emulated_metal" and tiling == (8, 8, 1):
        pytest.skip("eight rows over eight simdgroups take 54-87 KiB of threadgroup memory, "
                    "over the 32 KiB of Apple GPUs (emulation.run_metal refuses them)")
    m = matrix(ggml_type, rng, skip=1, path=path)
    x = rng.normal(size=(n_tokens, m.values.shape[1])).astype(np.float32)
    y = np.array(product(path, mx.array(x), m, request, tiling))
    assert (np.abs(y - x @ m.values.T) <= float32_bound(x, m.values)).all()


@pytest.mark.parametrize("path", PATHS[:2])
@pytest.mark.parametrize(
    "tiling", [None, Int8Tiling(warps=2, stages=2, ctas=2),
               Int8Tiling(warps=2, stages=2, per_lane=2, ctas=2),
               Int8Tiling(warps=8, stages=3, per_lane=1),
               Int8Tiling(warps=8, stages=3, per_lane=2),
               Int8Tiling(warps=4, stages=2, per_lane=4, ctas=1),
               Int8Tiling(warps=4, stages=4, per_lane=2, ctas=1)],
    ids=["default", "2warps-2stages-2ctas", "2warps-2stages-2ctas-2perlane", "8warps-1perlane",
         "8warps-2perlane", "4warps-2stages-4perlane-1cta", "4warps-4stages-2perlane-1cta"])
@pytest.mark.parametrize("dtype", [mx.float32, mx.bfloat16, mx.float16],
                         ids=["f32", "bf16", "f16"])
@pytest.mark.parametrize("ggml_type", sorted(INT8_TYPES, key=int), ids=lambda t: t.name)
def test_one_row_int8_kernel(
    path: str, ggml_type: T, dtype: mx.Dtype, tiling: Int8Tiling | None,
    rng: np.random.Generator, request: pytest.FixtureRequest,
) -> None:
    # gemv_int8 on a weight one row into its buffer, with one block of x all zeros (its scale
    # is 0: no division by it) and one with a single large value; two CTAs of two warps make
    # each warp stream several weight rows through its pipeline (9 or 37 rows); one or two
    # sub-blocks a lane (the last chunk of a row is partial: its blocks end mid-chunk); four
    # sub-blocks a lane (chunks of 4,096 elements) and four stages in one CTA of four warps
    # (within 48 KiB of shared memory for every format at these rows' 6-7K columns).
    if path == "gguf_kernel" and gpu_backend() != "cuda":
        pytest.skip("gemv_int8 is a CUDA kernel")
    if path == "gguf_kernel" and tiling and tiling.ctas == 1 and dtype != mx.bfloat16:
        pytest.skip("the one-CTA tilings run bf16 alone on the GPU (each variant compiles)")
    m = matrix(ggml_type, rng, skip=1, path=path)
    x = rng.normal(size=(1, m.values.shape[1])).astype(np.float32)
    x[0, 64:96] = 0.0
    # float16 ends at 65,504: with a spike of 1e4, y overflows for the formats with large
    # random weights (Q8_0 up to ~30, Q6_K ~700; Q8_0's y reaches 1.5e5); ten standard
    # deviations still dominate the spike's block
    x[0, 200] = 10.0 if dtype == mx.float16 else 1e4
    xd = mx.array(x).astype(dtype)
    got = product(path, xd, m, request, tiling or default_int8_tiling(ggml_type, m.values.shape[1]))
    assert got.dtype == dtype and got.shape == (1, m.rows)
    xr = int8_activations(np.array(xd.astype(mx.float32)))
    exact = xr @ m.values.T
    y = np.array(got.astype(mx.float32))
    assert np.isfinite(y).all()
    # float32 accumulation as everywhere; a half-precision output adds one rounding (at most
    # 2^-8 of |y|, as in test_half_precision_activations).
    slack = 0.0 if dtype == mx.float32 else 2.0**-8 * np.abs(exact)
    assert (np.abs(y - exact) <= float32_bound(xr, m.values) + slack).all()
    if dtype == mx.float32:
        # and the kernel did round x: its distance from the unrounded product (~1e-3 of |y|)
        # dwarfs its distance from the rounded one (float32 sums: ~1e-6)
        rounding = np.median(np.abs(x @ m.values.T - exact))
        assert np.median(np.abs(y - exact)) < 0.01 * rounding


@pytest.mark.parametrize("path", PATHS[:2])
@pytest.mark.parametrize("act", [None, "silu"], ids=["plain", "silu"])
@pytest.mark.parametrize("x_rows", range(2, INT8_MAX_ROWS + 1))
@pytest.mark.parametrize("ggml_type", sorted(INT8_TYPES, key=int), ids=lambda t: t.name)
def test_int8_kernel_on_several_rows(
    path: str, ggml_type: T, x_rows: int, act: str | None, rng: np.random.Generator,
    request: pytest.FixtureRequest,
) -> None:
    # A few decoding requests' rows through one gemv_int8 launch (XROWS), plain and gated, in
    # bfloat16, on a weight one row into its buffer, with the default tiling for that many
    # rows (fewer CTAs where the rows' copies of x crowd shared memory), each row unlike the
    # others (one with a block of zeros, one with a spike). Each output row's sum is the same
    # chain of one warp as the one-row kernel's on that row alone: equal bit for bit, and so
    # within the one-row test's bound of float64 arithmetic on the rounded x.
    if path == "gguf_kernel" and gpu_backend() != "cuda":
        pytest.skip("gemv_int8 is a CUDA kernel")
    if path == "emulated_cuda" and x_rows != 3:
        pytest.skip("the emulation runs three rows (each row count compiles)")
    pairs = EMULATED_PAIRS if path == "emulated_cuda" else GATED_PAIRS
    m = matrix(ggml_type, rng, skip=1, path=path, rows=2 * pairs if act else None)
    cols = m.values.shape[1]
    x = (rng.normal(size=(x_rows, cols)) * (0.05 if act else 1.0)).astype(np.float32)
    x[0, 64:96] = 0.0
    x[-1, 200] = 100.0
    xd = mx.array(x).astype(mx.bfloat16)
    tiling = default_int8_tiling(ggml_type, cols, x_rows)
    one = default_int8_tiling(ggml_type, cols)
    if path == "gguf_kernel":
        lib = library("cuda")
        got = lib.gemv(xd, m.raw, ggml_type, tiling=tiling, act=act, init_value=NAN)
        rows = [lib.gemv(xd[r:r + 1], m.raw, ggml_type, tiling=one, act=act, init_value=NAN)
                for r in range(x_rows)]
    else:
        binary = request.getfixturevalue("emulator")
        got = emulated_int8(binary, xd, m, tiling, act)
        rows = [emulated_int8(binary, xd[r:r + 1], m, one, act) for r in range(x_rows)]
    outs = m.rows // 2 if act else m.rows
    assert got.dtype == mx.bfloat16 and got.shape == (x_rows, outs)
    y = np.array(got.astype(mx.float32))
    assert np.isfinite(y).all()
    np.testing.assert_array_equal(
        y, np.concatenate([np.array(r.astype(mx.float32)) for r in rows]))
    if act is None:
        assert within_int8_bound(y, xd, m)


@pytest.mark.parametrize("path", PATHS[:2])
@pytest.mark.parametrize("offset", [0, 2, 8])
@pytest.mark.parametrize("ggml_type", [T.Q4_K, T.Q5_K, T.Q4_0, T.Q4_1, T.Q5_0, T.Q5_1],
                         ids=lambda t: t.name)
def test_int8_at_any_offset(path: str, offset: int, ggml_type: T, rng: np.random.Generator,
                            request: pytest.FixtureRequest) -> None:
    # gemv_int8 reads Q4_K's and Q5_K's blocks with 16-byte loads of shared memory when the
    # matrix starts on 16 bytes, and from 4-byte words (scales byte by byte, formats.h) when it
    # does not; Q4_0's d and quants from words whose place in a lane's block (at % 4) an offset
    # of 2 swaps, and so Q4_1's and Q5_1's quants (their 20- and 24-byte blocks start on 4
    # bytes in an aligned matrix, on 2 past 4 at an offset of 2; Q5_0's 22 on either): one
    # weight, its buffer starting `offset` bytes past alignment. (On the GPU MLX may copy the
    # offset view; the emulation surely runs every path.)
    m = matrix(ggml_type, rng, path=path)
    tiling = default_int8_tiling(ggml_type, m.values.shape[1])
    xd = mx.array(rng.normal(size=(1, m.values.shape[1])).astype(np.float32)).astype(mx.bfloat16)
    if path == "gguf_kernel":
        if gpu_backend() != "cuda":
            pytest.skip("gemv_int8 is a CUDA kernel")
        flat = mx.array(np.concatenate([np.zeros(offset, np.uint8), m.buffer.ravel()]))
        raw = flat[offset:].reshape(m.buffer.shape)
        got = library("cuda").gemv(xd, raw, ggml_type, tiling=tiling, init_value=NAN)
    else:
        got = emulated_int8(request.getfixturevalue("emulator"), xd, m, tiling, offset=offset)
    y = np.array(got.astype(mx.float32))
    assert np.isfinite(y).all()
    assert within_int8_bound(y, xd, m)


@pytest.mark.parametrize("ggml_type", sorted(INT8_TYPES, key=int), ids=lambda t: t.name)
def test_int8_default_tilings_fit_every_row(ggml_type: T) -> None:
    # Each of the format's measured tilings serves rows up to its length; its shared memory
    # must hold them (or the launch fails), and the last must reach every row gemv_int8 takes.
    elems = FORMATS[ggml_type].block_elems
    for cols in range(elems, INT8_MAX_COLS + 1, elems):
        assert default_int8_tiling(ggml_type, cols).fits(ggml_type, cols), cols
    assert INT8_TILINGS[ggml_type][-1][0] == INT8_MAX_COLS


@pytest.mark.parametrize("path", PATHS[:2])
@pytest.mark.parametrize("ggml_type", sorted(INT8_TYPES, key=int), ids=lambda t: t.name)
def test_int8_default_tilings_at_their_longest_rows(
    path: str, ggml_type: T, rng: np.random.Generator, request: pytest.FixtureRequest,
) -> None:
    # Each measured tiling at the longest row it serves, where its shared memory is largest.
    # Session 10 found that a CTA whose shared memory passes 48 KiB launches only when its
    # dynamic part alone does (MLX opts a kernel in by that part): Q4_0's 8/2/4 at 9,216
    # columns needed 48.9 KiB, 11.5 of them static, and failed. All of it is dynamic now.
    if path == "gguf_kernel" and gpu_backend() != "cuda":
        pytest.skip("gemv_int8 is a CUDA kernel")
    for longest, tiling in INT8_TILINGS[ggml_type]:
        check_int8_tiling(path, matrix(ggml_type, rng, path=path, cols=longest), tiling, rng,
                          request)


C_TYPES = {mx.bfloat16: "__nv_bfloat16", mx.float32: "float", mx.float16: "__half"}


def mlx_kernel_source(name: str, inputs: dict[str, str], out_type: str, body: str,
                      template: list[tuple[str, object]],
                      outputs: tuple[str, ...] = ("y",)) -> list[str]:
    """A ``__global__`` function as MLX 0.32's ``cuda_kernel`` writes one: each input's
    pointer (and its ``_shape``, where the body uses it), the outputs (of *out_type*), then the
    template arguments declared as MLX declares them (dtypes as ``using``), then the body."""
    params = []
    for arg, c_type in inputs.items():
        params.append(f"const {c_type}* {arg}")
        if f"{arg}_shape" in body:
            params.append(f"const __grid_constant__ Shape {arg}_shape")
    params.extend(f"{out_type}* {out}" for out in outputs)
    return [f"__global__ void {name}({', '.join(params)}) {{",
            *(f"  using {key} = {C_TYPES[v]};" if isinstance(v, mx.Dtype) else
              f"  constexpr bool {key} = {str(v).lower()};" if isinstance(v, bool) else
              f"  constexpr int {key} = {v};" for key, v in template),
            body, "}"]


def test_cuda_kernels_compile_for_sm90(tmp_path: Path) -> None:
    """Every CUDA body of the library (the matrix-vector kernel at every activation tile,
    dequantization, every default gemv_int8 tiling with every activation dtype (gated and with
    the AddNorm epilogue: bf16, the models' dtype on a GPU; the others differ only in T), for
    each format and packed Q4_0,
    and on x rounded beforehand, round_x, gemv_packed, feed_forward, gemm_packed, gemm_blocks
    for each format), compiled by
    nvcc for sm_90a as MLX builds it: the .cu body under exactly the template arguments the
    library passes. The CPU emulation includes the .cuh files alone, so this is what checks,
    without a GPU, that the library's arguments and the bodies' names agree (a mismatch cost a
    GPU call in session 11). Skipped without nvcc; ptxas's register counts are printed
    (pytest -s)."""
    header = kernel_source("cuda", "gemv")[0]
    preamble = ["#include <cstdint>", header,
                "struct Shape { int64_t v[2]; __device__ int64_t operator[](int i) const "
                "{ return v[i]; } };"]
    source: list[str] = []  # one kernel each
    names: list[str] = []

    def add(op: str, label: str, launch: _Launch, inputs: dict[str, str], out: str,
            outputs: tuple[str, ...] = ("y",)) -> None:
        names.append(f"{op} {label}")
        source.append("\n".join(mlx_kernel_source(f"k{len(names) - 1}", inputs, out,
                                                   kernel_source("cuda", op)[1],
                                                   launch.template, outputs)))

    # (packed Q4_0 rows have the bytes of Q4_0's: 4,096 and every INT8_TILINGS length are
    # whole super-blocks)
    layouts = [(t, False) for t in TYPES] + [(T.Q4_0, True)]
    for ggml_type, packed in layouts:
        block_elems, block_bytes = FORMATS[ggml_type].block_elems, FORMATS[ggml_type].block_bytes
        raw_shape = (8, 4096 // block_elems * block_bytes)
        name = f"{ggml_type.name}{' packed' if packed else ''}"
        for rows in ACTIVATION_TILES:
            op, launch = _gemv_plan("cuda", ggml_type, raw_shape, mx.uint8, (rows, 4096),
                                    mx.bfloat16, rows, None, packed=packed)
            add(op, f"{name} tile {rows}", launch,
                {"w": "uint8_t", "x": "__nv_bfloat16"}, "__nv_bfloat16")
        add("dequant", name, _dequant_launch(ggml_type, raw_shape, mx.uint8, mx.bfloat16,
                                             packed),
            {"w": "uint8_t"}, "__nv_bfloat16")
    for ggml_type, packed in layouts:
        if ggml_type not in INT8_TYPES:
            continue
        block_elems, block_bytes = FORMATS[ggml_type].block_elems, FORMATS[ggml_type].block_bytes
        name = f"{ggml_type.name}{' packed' if packed else ''}"
        for longest, tiling in INT8_TILINGS[ggml_type]:
            raw_shape = (8, longest // block_elems * block_bytes)
            for dtype in C_TYPES:
                launch = _int8_launch("cuda", ggml_type, raw_shape, mx.uint8, (1, longest),
                                      dtype, tiling, packed=packed)
                assert (dict(launch.template)["GGML_TYPE"] == PACKED_Q4_0) == packed
                add("gemv_int8", f"{name} {tiling} {dtype} at {longest} columns",
                    launch, {"w": "uint8_t", "x": C_TYPES[dtype]}, C_TYPES[dtype])
                for act in GATED_ACTS if dtype == mx.bfloat16 else ():  # the gated mode
                    launch = _int8_launch("cuda", ggml_type, raw_shape, mx.uint8, (1, longest),
                                          dtype, tiling, act, packed=packed)
                    add("gemv_int8", f"{name} {tiling} {dtype} {act}", launch,
                        {"w": "uint8_t", "x": C_TYPES[dtype]}, C_TYPES[dtype])
            # the AddNorm epilogue, in bf16 as a model runs it
            launch = _add_norm_launch("cuda", ggml_type, raw_shape, mx.uint8, (1, longest),
                                      mx.bfloat16, tiling, packed)
            t = C_TYPES[mx.bfloat16]
            add("gemv_int8_norm", f"{name} {tiling} at {longest} columns", launch,
                {"w": "uint8_t", "x": t, "residual": t, "nw": t, "eps": "float",
                 "scratch": "uint32_t"}, t, ("h", "normed"))
            for x_rounded, act in (("shared", None), ("global", "silu")):
                # on round_x's buffer, bf16 out
                launch = _int8_launch("cuda", ggml_type, raw_shape, mx.uint8,
                                      (1, rounded_x_bytes(longest)), mx.uint8, tiling, act,
                                      x_rounded, mx.bfloat16, packed)
                add("gemv_int8", f"{name} {tiling} x {x_rounded} {act}", launch,
                    {"w": "uint8_t", "x": "uint8_t"}, "__nv_bfloat16")
    for dtype in C_TYPES:
        add("round_x", str(dtype), _round_x_launch("cuda", (1, 4096), dtype),
            {"x": C_TYPES[dtype]}, "uint8_t")
    t = C_TYPES[mx.bfloat16]  # the feed-forward part at Llama-3-8B's shapes, bf16
    add("feed_forward", "4096x14336 bf16", _feed_forward_launch(4096, 14336, 4096, mx.bfloat16,
                                                                "silu"),
        {"wgu": "uint8_t", "wd": "uint8_t", "x": t, "residual": t, "nw": t, "eps": "float",
         "scratch": "uint32_t"}, t, ("h", "normed"))
    for longest, tiling in PACKED_TILINGS:  # gemv_packed, plain and gated
        for act in (None, *GATED_ACTS):
            rows = 16 if act else 8
            launch = _packed_launch("cuda", (rows, longest // 1024 * 576), mx.uint8,
                                    (1, rounded_x_bytes(longest)), mx.uint8, mx.bfloat16, tiling,
                                    act)
            add("gemv_packed", f"{tiling} {act}", launch, {"w": "uint8_t", "xr": "uint8_t"},
                "__nv_bfloat16")
    for m in (2, 17):  # gemm_packed at its default tiling (two CTA rows from 17), both halves
        for dtype in (mx.bfloat16, mx.float16):
            for act in (None, "silu") if dtype == mx.bfloat16 else (None,):
                launch = _gemm_launch("cuda", (8, 4 * 576), mx.uint8, (m, 4096), dtype, None,
                                      act)
                add("gemm_packed", f"{m} rows {dtype} {act}", launch,
                    {"w": "uint8_t", "x": C_TYPES[dtype]}, C_TYPES[dtype])
    for outs, cols, m in ((6144, 4096, 12), (4096, 14336, 2), (4096, 14336, 17)):
        # default_gemm_tiling's two row tiles: 1 x 4 above 8 rows, 1 x 8 past 4096 columns
        launch = _gemm_launch("cuda", (outs, cols // 1024 * 576), mx.uint8, (m, cols),
                              mx.bfloat16, None)
        add("gemm_packed", f"{outs}x{cols} {m} rows", launch,
            {"w": "uint8_t", "x": "__nv_bfloat16"}, "__nv_bfloat16")
    for ggml_type in TYPES:  # gemm_blocks at its default tilings (8 and 16 rows a CTA)
        raw_shape = (8, 4096 // FORMATS[ggml_type].block_elems * FORMATS[ggml_type].block_bytes)
        for m in (2, 9):
            launch = _blocks_launch("cuda", ggml_type, raw_shape, mx.uint8, (m, 4096),
                                    mx.bfloat16, None)
            add("gemm_blocks", f"{ggml_type.name} {m} rows", launch,
                {"w": "uint8_t", "x": "__nv_bfloat16"}, "__nv_bfloat16")
    add("gemm_blocks", "Q4_K 9 rows f16",
        _blocks_launch("cuda", T.Q4_K, (8, 16 * 144), mx.uint8, (9, 4096), mx.float16, None),
        {"w": "uint8_t", "x": "__half"}, "__half")
    # (MLX's JIT header with its elementwise functors, which the gated mode uses, is compiled
    # into libmlx: tests/nvcc_include holds a stand-in with the same names)
    used = emulation.nvcc_registers("\n".join(preamble), source, tmp_path,
                                    include_dirs=[Path(__file__).parent / "nvcc_include"])
    assert sorted(used) == list(range(len(names)))
    for i, n in used.items():
        print(f"{names[i]}: {n} registers a thread")


def _int8_sweep() -> ModuleType:
    """benchmarks/int8_sweep.py: the tilings Nsight Compute measures on the GPU machine."""
    return benchmark_module("int8_sweep")


@pytest.mark.parametrize("name, warps, stages, per_lane, held", _int8_sweep().templates(),
                         ids=lambda v: str(v))
def test_int8_sweep_tilings_emulated(
    name: str, warps: int, stages: int, per_lane: int, held: bool, rng: np.random.Generator,
    request: pytest.FixtureRequest,
) -> None:
    # Every template of the Nsight Compute sweep's candidates (benchmarks/kernel_ncu.py
    # --int8-sweep; the CTA count only sizes the grid) on the emulation, bf16 x as the sweep
    # runs it: one CTA, so that each warp streams 1-2 (8 warps) or 2-3 (4 warps) rows of 2-7
    # chunks through its stages; the weight one row into its buffer. (On the GPU the sweep
    # compares each tiling's product with the default tiling's.)
    tiling = Int8Tiling(warps=warps, stages=stages, per_lane=per_lane, ctas=1,
                        x_in_registers=held)
    check_int8_tiling("emulated_cuda", matrix(T[name], rng, skip=1, path="emulated_cuda"),
                      tiling, rng, request)


@pytest.mark.parametrize("ggml_type", sorted(INT8_TYPES, key=int), ids=lambda t: t.name)
@pytest.mark.parametrize("cols_of_chunk", [1.0, 0.375], ids=["one-chunk", "part-chunk"])
def test_int8_x_in_registers_emulated(
    ggml_type: T, cols_of_chunk: float, rng: np.random.Generator,
    request: pytest.FixtureRequest,
) -> None:
    # XREG where it is meant to serve: rows of exactly one chunk (every row then reads the
    # same x from registers), and of part of one (lanes past the row's end hold a clamped
    # block they never use). Two-chunk rows, where the second chunk reads shared memory, are
    # in the sweep's test above.
    elems = FORMATS[ggml_type].block_elems
    cols = int(CHUNK_ELEMS * 4 * cols_of_chunk) // elems * elems
    tiling = Int8Tiling(warps=2, stages=2, per_lane=4, ctas=2, x_in_registers=True)
    check_int8_tiling("emulated_cuda",
                      matrix(ggml_type, rng, skip=1, path="emulated_cuda", cols=cols), tiling,
                      rng, request)


# The gated mode: y[i] = act(g_i) * u_i for g = gate rows, u = up rows of one fused weight.
GLU = {  # float64, as the activations' formulas (nn.silu, nn.gelu_approx)
    "silu": lambda g: g / (1.0 + np.exp(-g)),
    "gelu_tanh": lambda g: 0.5 * g * (1.0 + np.tanh(np.sqrt(2.0 / np.pi)
                                                   * (g + 0.044715 * g**3))),
}
GLU_FUNCTIONS = {"silu": nn.silu, "gelu_tanh": nn.gelu_approx}  # what the kernel mirrors
UNIT_ROUNDOFF = {mx.float32: 2.0**-24, mx.bfloat16: 2.0**-8, mx.float16: 2.0**-11}
GATED_PAIRS = 37  # F: gate/up row pairs (not a multiple of any tiling's warps or CTAs)
EMULATED_PAIRS = 9


def glu_bound(g: np.ndarray, u: np.ndarray, bg: np.ndarray, bu: np.ndarray, act: str,
              dtype: mx.Dtype) -> np.ndarray:
    """How far ``act(g_T) * u_T`` computed on T (as MLX's compiled ``act(g) * u`` computes it)
    may be from the exact ``act(g) * u``, for g and u with float32 accumulation bounds bg and
    bu, then each rounded to T (unit roundoff e). g's error passes through act, whose slope
    stays under 1.13 (SiLU 1.100, GELU-tanh 1.129), u's through the product. The activation
    and the product on T are roundings of at most e each, six for SiLU (exp, 1 + e, 1 / s,
    1 - y, g * s, * u), nine for GELU (g^3, 0.044715 and sqrt(2 / pi) rounded to T and their
    products, +, tanh, 1 +, 0.5 * g * that, * u); with |act(g)| <= |g|, |tanh'(z) z| <= 0.45
    and 1 + tanh <= 2 they add up to about 6 e |g| |u| (SiLU) and 5 e (GELU): 8 e is the
    bound. (In float32 the accumulation bounds dominate: CUDA's exp, tanh and pow, within two
    ulps rather than half of one, do not matter there.) Measured in the emulation: under 3 e
    in bfloat16, a tenth of the whole bound."""
    e = UNIT_ROUNDOFF[dtype]
    g_t = np.abs(g) * (1 + e) + bg  # bounds on |g_T| and |u_T|
    u_t = np.abs(u) * (1 + e) + bu
    return (1.13 * (bg + e * np.abs(g)) * u_t + np.abs(GLU[act](g)) * (bu + e * np.abs(u))
            + 8 * e * g_t * u_t)


def gated_x(m: Matrix, rng: np.random.Generator, dtype: mx.Dtype) -> mx.array:
    """One row of x scaled so that g is mostly within +-3, where SiLU and GELU bend (random
    blocks are far larger than a model's weights)."""
    cols = m.values.shape[1]
    scale = 1.5 / (np.sqrt(cols) * np.sqrt(np.mean(m.values**2)))
    return mx.array((rng.normal(size=(1, cols)) * scale).astype(np.float32)).astype(dtype)


def gated_product(path: str, x: mx.array, m: Matrix, act: str, tiling: Int8Tiling,
                  request: pytest.FixtureRequest) -> mx.array:
    """``act(g) * u`` ``[1, rows / 2]`` by ``gemv_int8``'s gated mode: on the GPU on a
    poisoned output, or in the emulation."""
    if path == "gguf_kernel":
        backend = gpu_backend()
        assert backend is not None
        return library(backend).gemv(x, m.raw, m.ggml_type, tiling=tiling,
                                     act=act, init_value=NAN, packed=m.packed)
    if x.dtype not in (mx.float32, mx.bfloat16):
        pytest.skip("the emulation runs float32 and bfloat16 activations")
    return emulated_int8(request.getfixturevalue("emulator"), x, m, tiling, act)


@pytest.mark.parametrize("path", PATHS[:2])
@pytest.mark.parametrize("tiling", [None, Int8Tiling(warps=2, stages=2, per_lane=1, ctas=2),
                                    Int8Tiling(warps=2, stages=2, per_lane=2, ctas=2),
                                    Int8Tiling(warps=2, stages=2, per_lane=4, ctas=2,
                                               x_in_registers=True)],
                         ids=["default", "2warps-2ctas", "2warps-2ctas-2perlane",
                              "2warps-2ctas-4perlane-xreg"])
@pytest.mark.parametrize("dtype", [mx.float32, mx.bfloat16, mx.float16],
                         ids=["f32", "bf16", "f16"])
@pytest.mark.parametrize("act", sorted(GATED_ACTS))
@pytest.mark.parametrize("ggml_type", sorted(INT8_TYPES, key=int), ids=lambda t: t.name)
def test_gated_int8_kernel(
    path: str, ggml_type: T, act: str, dtype: mx.Dtype, tiling: Int8Tiling | None,
    rng: np.random.Generator, request: pytest.FixtureRequest,
) -> None:
    # act(g) * u from one fused weight of 2F rows, F pairs not a multiple of the warps (9
    # pairs: the defaults' third CTA of four warps has one busy warp; two CTAs of two warps
    # stream three pairs a warp, six rows, through their stages), the weight one row into its
    # buffer, against float64 arithmetic on x rounded to int8 as gemv_int8 rounds it. XREG
    # (x's first chunk in registers, off by default): rows of two 4,096-element chunks, so a
    # pair's gate and up rows each read the first from registers, the second from shared
    # memory.
    if path == "gguf_kernel" and gpu_backend() != "cuda":
        pytest.skip("gemv_int8 is a CUDA kernel")
    if path == "gguf_kernel" and tiling and tiling.x_in_registers:
        pytest.skip("XREG is off by default and unmeasured: emulated only")
    if path == "gguf_kernel" and tiling and dtype != mx.bfloat16:
        pytest.skip("the other tilings run bf16 alone on the GPU (each variant compiles)")
    pairs = EMULATED_PAIRS if path == "emulated_cuda" else GATED_PAIRS
    m = matrix(ggml_type, rng, skip=1, path=path, rows=2 * pairs)
    x = gated_x(m, rng, dtype)
    t = tiling or default_int8_tiling(ggml_type, m.values.shape[1])
    got = gated_product(path, x, m, act, t, request)
    assert got.dtype == dtype and got.shape == (1, pairs)
    y = np.array(got.astype(mx.float32))[0]
    assert np.isfinite(y).all()
    xr = int8_activations(np.array(x.astype(mx.float32)))[0]
    wg, wu = m.values[:pairs], m.values[pairs:]
    g, u = wg @ xr, wu @ xr
    bound = glu_bound(g, u, float32_bound(xr, wg), float32_bound(xr, wu), act, dtype)
    assert (np.abs(y - GLU[act](g) * u) <= bound).all()


@pytest.mark.gpu
@pytest.mark.parametrize("tiling", [None, Int8Tiling(warps=2, stages=2, per_lane=2, ctas=2)],
                         ids=["default", "2warps-2ctas-2perlane"])
@pytest.mark.parametrize("dtype", [mx.float32, mx.bfloat16, mx.float16],
                         ids=["f32", "bf16", "f16"])
@pytest.mark.parametrize("act", sorted(GATED_ACTS))
@pytest.mark.parametrize("ggml_type", sorted(INT8_TYPES, key=int), ids=lambda t: t.name)
def test_gated_kernel_equals_the_unfused_path(
    ggml_type: T, act: str, dtype: mx.Dtype, tiling: Int8Tiling | None,
    rng: np.random.Generator,
) -> None:
    # The fused kernel against what it replaces on the GPU: the plain product of the same
    # tiling (so g and u are the same T values), split, then MLX's compiled act(g) * u; both
    # outputs poisoned with NaN. The two run the same MLX functors on the same values, but
    # NVRTC may contract a multiply and an add into an fma in one and not the other (PTX's
    # add and mul without a rounding mode allow it, in f32, f16 and bf16): each is within
    # `glu_bound`'s activation term (8 e |g_T| |u_T|) of the exact act(g_T) * u_T, so within
    # twice that of each other.
    if gpu_backend() != "cuda":
        pytest.skip("gemv_int8 is a CUDA kernel")
    if tiling and dtype != mx.bfloat16:
        pytest.skip("the other tiling runs bf16 alone (each variant compiles)")
    m = matrix(ggml_type, rng, skip=1, rows=2 * GATED_PAIRS)
    x = gated_x(m, rng, dtype)
    t = tiling or default_int8_tiling(ggml_type, m.values.shape[1])
    lib = library("cuda")
    fused = lib.gemv(x, m.raw, ggml_type, tiling=t, act=act, init_value=NAN)
    both = lib.gemv(x, m.raw, ggml_type, tiling=t, init_value=NAN)
    g, u = mx.split(both, 2, axis=-1)
    unfused = gated(GLU_FUNCTIONS[act])(g, u)
    assert fused.dtype == unfused.dtype == dtype and fused.shape == unfused.shape
    a, b = np.array(fused.astype(mx.float32)), np.array(unfused.astype(mx.float32))
    assert np.isfinite(a).all() and np.isfinite(b).all()
    gt, ut = np.array(g.astype(mx.float32)), np.array(u.astype(mx.float32))
    diff = np.abs(a - b)
    assert (diff <= 2 * 8 * UNIT_ROUNDOFF[dtype] * np.abs(gt) * np.abs(ut)).all()
    print(f"{ggml_type.name} {act} {dtype}: {np.mean(diff == 0):.3f} of outputs equal")


# ---- gemv_int8's AddNorm epilogue: the product, a residual add and an RMS norm ----

NORM_EPS = 1e-5
NORM_TILINGS = [None, Int8Tiling(warps=2, stages=2, per_lane=1, ctas=2)]


def add_norm_runs(path: str, x: mx.array, m: Matrix, residual: mx.array, weight: mx.array,
                  tiling: Int8Tiling, request: pytest.FixtureRequest
                  ) -> tuple[list[tuple[np.ndarray, np.ndarray]], int]:
    """(h, normed) as float32 of two launches in a row on one scratch (the second finds the
    count the first left), on poisoned outputs, and the scratch's count after them."""
    if path == "gguf_kernel":
        scratch, runs = add_norm_scratch(), []
        for _ in range(2):  # evaluated apart: they share the scratch but no data
            h, n = library("cuda").gemv_add_norm(x, m.raw, m.ggml_type, residual, weight,
                                                 NORM_EPS, scratch, tiling=tiling,
                                                 init_value=NAN)
            runs.append((np.array(h.astype(mx.float32))[0], np.array(n.astype(mx.float32))[0]))
        return runs, int(scratch[0].item())
    args = ["gemv_int8_norm", m.kernel_type, tiling.warps, tiling.stages, tiling.per_lane,
            tiling.grid(m.rows), m.rows, m.buffer.shape[1], m.skip,
            int(x.dtype == mx.bfloat16), NORM_EPS]
    stdin = m.buffer.tobytes() + b"".join(np.array(a.view(mx.uint8)).tobytes()
                                          for a in (x, residual, weight))
    out = emulation.run(request.getfixturevalue("emulator"), args, stdin)
    values = mx.array(np.frombuffer(out[:-4], np.uint8)).view(x.dtype).reshape(4, m.rows)
    v = np.array(values.astype(mx.float32))
    return [(v[0], v[1]), (v[2], v[3])], int(np.frombuffer(out[-4:], np.uint32)[0])


@pytest.mark.parametrize("path", PATHS[:2])
@pytest.mark.parametrize("tiling", NORM_TILINGS, ids=["default", "2warps-2ctas"])
@pytest.mark.parametrize("dtype", [mx.float32, mx.bfloat16, mx.float16],
                         ids=["f32", "bf16", "f16"])
@pytest.mark.parametrize("ggml_type", sorted(INT8_TYPES, key=int), ids=lambda t: t.name)
def test_add_norm_epilogue(
    path: str, ggml_type: T, dtype: mx.Dtype, tiling: Int8Tiling | None,
    rng: np.random.Generator, request: pytest.FixtureRequest,
) -> None:
    # h = residual + W x and normed = rms_norm(h) * w from one launch (37 rows on the GPU, 9
    # emulated: several CTAs, the last of which forms the norm), twice on the same scratch.
    # h must equal, bit for bit, the plain product of the same tiling added to the residual
    # in T (one rounding each, as the separate add makes them). normed against float64 on
    # that h: the kernel's 1/rms is float32 (its sum of squares within rows * 2^-24, CUDA's
    # rsqrtf within 2 ulps: 2^-21), then two roundings to T (h / rms, then times w), e each:
    # within (2e + rows * 2^-24 + 2^-20) |w h / rms|. Both launches give the same bits and
    # leave the count at zero.
    if path == "gguf_kernel" and gpu_backend() != "cuda":
        pytest.skip("gemv_int8 is a CUDA kernel")
    if path == "emulated_cuda" and dtype == mx.float16:
        pytest.skip("the emulation runs float32 and bfloat16 activations")
    if dtype != mx.bfloat16 and (ggml_type != T.Q4_0 or path == "gguf_kernel" and tiling):
        # the epilogue is the same code for every format: other dtypes on Q4_0 alone (a GPU
        # variant is an NVRTC compile of several seconds, an emulated one ~10 s of CI)
        pytest.skip("float32 and float16 run Q4_0 alone (the GPU: its default tiling)")
    m = matrix(ggml_type, rng, skip=1, path=path)
    x = mx.array(rng.normal(size=(1, m.values.shape[1])).astype(np.float32)).astype(dtype)
    residual = mx.array(rng.normal(size=(1, m.rows)).astype(np.float32) * 100).astype(dtype)
    weight = mx.array(rng.normal(size=(m.rows,)).astype(np.float32)).astype(dtype)
    t = tiling or default_int8_tiling(ggml_type, m.values.shape[1])
    plain = product(path, x, m, request, t)
    expected_h = np.array((residual.astype(mx.float32) + plain.astype(mx.float32))
                          .astype(dtype).astype(mx.float32))[0]
    runs, count = add_norm_runs(path, x, m, residual, weight, t, request)
    assert count == 0
    for h, normed in runs:
        np.testing.assert_array_equal(h, expected_h)
        r = h.astype(np.float64)
        exact = np.array(weight.astype(mx.float32), np.float64) * r / np.sqrt(
            np.mean(r**2) + NORM_EPS)
        bound = (2 * UNIT_ROUNDOFF[dtype] + m.rows * 2.0**-24 + 2.0**-20) * np.abs(exact)
        assert np.isfinite(normed).all() and (np.abs(normed - exact) <= bound).all()
    np.testing.assert_array_equal(runs[0][1], runs[1][1])


@pytest.mark.gpu
@pytest.mark.parametrize("ggml_type, cols", [(t, None) for t in sorted(INT8_TYPES, key=int)]
                         + [(T.Q4_0, PACKED_COLS)],
                         ids=[t.name for t in sorted(INT8_TYPES, key=int)] + ["Q4_0-packed"])
def test_add_norm_product_equals_the_unfused_path(ggml_type: T, cols: int | None,
                                                   rng: np.random.Generator) -> None:
    # RMSNorm.add of a Product (one launch: gemv_int8_norm) against the same norm of the
    # product computed first (gemv_int8, then add_rms_norm), bf16 as a model runs: h bit for
    # bit; normed within twice the epilogue test's bound of each other (the two kernels add
    # the squares in different orders). Q4_0 of whole super-blocks is repacked on CUDA, as a
    # Llama model's is.
    from vexel_core.model.layers import Product, RMSNorm
    from vexel_core.model.linear import Linear

    if gpu_backend() != "cuda":
        pytest.skip("gemv_int8 is a CUDA kernel")
    m = matrix(ggml_type, rng, cols=cols)
    linear = Linear(FORMATS[ggml_type].load(m.buffer, m.values.shape))
    assert getattr(linear.weight, "packed", False) == (cols is not None)
    x = mx.array(rng.normal(size=(1, m.values.shape[1])).astype(np.float32)).astype(mx.bfloat16)
    residual = mx.array(rng.normal(size=(1, m.rows)).astype(np.float32)).astype(mx.bfloat16)
    norm = RMSNorm(mx.array(rng.normal(size=(m.rows,)).astype(np.float32)).astype(mx.bfloat16),
                   NORM_EPS)
    fused, unfused = norm.add(residual, Product(linear, x)), norm.add(residual, linear(x))
    (h1, n1), (h2, n2) = ([np.array(a.astype(mx.float32))[0] for a in pair]
                          for pair in (fused, unfused))
    np.testing.assert_array_equal(h1, h2)
    bound = 2 * (2 * 2.0**-8 + m.rows * 2.0**-24 + 2.0**-20) * np.abs(n2)
    assert np.isfinite(n1).all() and (np.abs(n1 - n2) <= bound + 2.0**-8 * np.abs(n1)).all()


def test_add_norm_takes_the_kernel_where_it_applies(
    rng: np.random.Generator, monkeypatch: pytest.MonkeyPatch
) -> None:
    # RMSNorm.add's choice for a Product, off the GPU: with CUDA's kernels pretended (their
    # launches recorded), one row of an INT8_TYPES weight without a bias is gemv_int8's AddNorm
    # epilogue; more rows, another format or a bias take the product (4 rows of bf16: on the
    # tensor cores, gemm_blocks), then the add and norm.
    import vexel_core.quant.kernels as kernels
    import vexel_core.quant.weights as weights
    from vexel_core.model.layers import Product, RMSNorm
    from vexel_core.model.linear import Linear
    from vexel_core.quant.kernels.library import KernelLibrary

    calls: list[str] = []

    def gemv(self: KernelLibrary, x: mx.array, raw: mx.array, ggml_type: T,
             **kw: object) -> mx.array:
        calls.append("gemv")
        return mx.zeros((x.shape[0], raw.shape[0]), x.dtype)

    def gemm_blocks(self: KernelLibrary, x: mx.array, raw: mx.array, ggml_type: T,
                    **kw: object) -> mx.array:
        calls.append("gemm_blocks")
        return mx.zeros((x.shape[0], raw.shape[0]), x.dtype)

    def gemv_add_norm(self: KernelLibrary, x: mx.array, raw: mx.array, ggml_type: T,
                      residual: mx.array, weight: mx.array, eps: float, scratch: mx.array,
                      **kw: object) -> tuple[mx.array, mx.array]:
        calls.append("gemv_add_norm")
        return residual, residual

    monkeypatch.setattr(kernels, "gpu_backend", lambda: "cuda")
    monkeypatch.setattr(weights, "select_for", lambda *a: QuantPath.GGUF_KERNEL)
    monkeypatch.setattr(KernelLibrary, "gemv", gemv)
    monkeypatch.setattr(KernelLibrary, "gemv_add_norm", gemv_add_norm)
    monkeypatch.setattr(KernelLibrary, "gemm_blocks", gemm_blocks)
    monkeypatch.setattr("vexel_core.model.layers.kernel_backend", lambda: None)
    cols, out = 256, 8
    norm = RMSNorm(mx.ones((out,), mx.bfloat16), NORM_EPS)
    for ggml_type, rows, bias, kernel in [
            (T.Q4_0, 1, False, "gemv_add_norm"), (T.Q6_K, 1, False, "gemv_add_norm"),
            (T.Q5_K, 1, False, "gemv_add_norm"), (T.Q4_1, 1, False, "gemv_add_norm"),
            (T.Q5_0, 1, False, "gemv_add_norm"), (T.Q5_1, 1, False, "gemv_add_norm"),
            (T.Q4_0, 2, False, "gemv"), (T.Q4_0, 3, False, "gemm_blocks"),
            (T.Q3_K, 1, False, "gemv"), (T.Q8_0, 1, True, "gemv")]:
        w = FORMATS[ggml_type].load(random_raw(ggml_type, out, cols, rng), (out, cols))
        linear = Linear(w, mx.zeros((out,), mx.bfloat16) if bias else None)
        calls.clear()
        h, n = norm.add(mx.ones((rows, out), mx.bfloat16),
                        Product(linear, mx.zeros((rows, cols), mx.bfloat16)))
        mx.eval(h, n)
        assert h.shape == n.shape == (rows, out)
        assert calls == [kernel], (ggml_type, rows, bias)


# x rounded once beforehand (round_x) and gemv_int8 reading it so (XPRE 1: copied into each
# CTA's shared memory, 2: read from global memory) instead of each CTA rounding it again.
ROUNDED_TILINGS = {  # (tiling, short rows): None, the format's default (on the GPU alone)
    "2warps-2perlane": (Int8Tiling(warps=2, stages=2, per_lane=2, ctas=2), False),
    "2warps-4perlane-xreg": (Int8Tiling(warps=2, stages=2, per_lane=4, ctas=2,
                                        x_in_registers=True), True),
    "default": (None, False),
}


@pytest.mark.parametrize("path", PATHS[:2])
@pytest.mark.parametrize("cols", [32, 32 * 197], ids=["1block", "197blocks"])
@pytest.mark.parametrize("dtype", [mx.float32, mx.bfloat16, mx.float16],
                         ids=["f32", "bf16", "f16"])
def test_round_x_equals_the_rounding_in_numpy(
    path: str, dtype: mx.Dtype, cols: int, rng: np.random.Generator,
    request: pytest.FixtureRequest,
) -> None:
    # round_x's buffer byte for byte against numpy's rounding (int8_blocks, gemv_int8's own
    # arithmetic): one block, and 197 (four CTAs, the last one part full; xsum then starts off
    # 16 bytes) with a block of zeros (d = 0: no division by it), a spike, and a block whose
    # scale is 1 holding ties (2.5 -> 2, -3.5 -> -4: to even). Poisoned output.
    if path == "gguf_kernel" and gpu_backend() != "cuda":
        pytest.skip("round_x is a CUDA kernel")
    x = rng.normal(size=(1, cols)).astype(np.float32)
    if cols > 128:
        x[0, 32:64] = 0.0
        x[0, 70] = 1e4 if dtype != mx.float16 else 1e3
        x[0, 96:104] = [127.0, 2.5, -3.5, 0.5, -0.5, 1.5, 126.5, -125.5]
    xd = mx.array(x).astype(dtype)
    if path == "gguf_kernel":
        got = np.array(library("cuda").round_x(xd, init_value=255))
    else:
        if dtype == mx.float16:
            pytest.skip("the emulation runs float32 and bfloat16 activations")
        got = emulated_round_x(request.getfixturevalue("emulator"), xd)
    expected = rounded_x_reference(np.array(xd.astype(mx.float32))[0])
    assert got.size == rounded_x_bytes(cols) == expected.size
    np.testing.assert_array_equal(got.ravel(), expected)


@pytest.mark.parametrize("path", PATHS[:2])
@pytest.mark.parametrize("tiling", sorted(ROUNDED_TILINGS))
@pytest.mark.parametrize("act", [None, "silu"], ids=["plain", "silu"])
@pytest.mark.parametrize("x_rounded", sorted(X_ROUNDED))
@pytest.mark.parametrize("ggml_type", sorted(INT8_TYPES, key=int), ids=lambda t: t.name)
def test_int8_on_x_rounded_beforehand(
    path: str, ggml_type: T, x_rounded: XRounded, act: str | None, tiling: str,
    rng: np.random.Generator, request: pytest.FixtureRequest,
) -> None:
    # gemv_int8 on round_x's buffer against the same tiling rounding x in each CTA: the same
    # values in the same order, so the same bits (bf16 outputs, both poisoned), plain and
    # gated. Rows of several chunks, the last partial (197 blocks of x for Q4_0 and Q8_0: xd
    # and xsum not 16-byte multiples), or short rows (37 and 24 blocks) read from registers.
    if path == "gguf_kernel" and gpu_backend() != "cuda":
        pytest.skip("gemv_int8 is a CUDA kernel")
    chosen, short = ROUNDED_TILINGS[tiling]
    if path == "emulated_cuda" and chosen is None:
        pytest.skip("the emulation builds x rounded beforehand for two-warp tilings alone")
    if path == "gguf_kernel" and chosen and chosen.x_in_registers:
        pytest.skip("XREG is off by default and unmeasured: emulated only")
    elems = FORMATS[ggml_type].block_elems
    cols = (32 * 37 if elems == 32 else 256 * 3) if short else None
    rows = (EMULATED_PAIRS if path == "emulated_cuda" else GATED_PAIRS) * (2 if act else 1)
    m = matrix(ggml_type, rng, skip=1, path=path, cols=cols, rows=rows)
    x = gated_x(m, rng, mx.bfloat16)
    t = chosen or default_int8_tiling(ggml_type, m.values.shape[1])
    if path == "gguf_kernel":
        lib = library("cuda")
        xr = lib.round_x(x)
        got = lib.gemv(xr, m.raw, ggml_type, tiling=t, act=act, x_rounded=x_rounded,
                       dtype=x.dtype, init_value=NAN)
        each_cta = lib.gemv(x, m.raw, ggml_type, tiling=t, act=act, init_value=NAN)
    else:
        binary = request.getfixturevalue("emulator")
        xr = mx.array(emulated_round_x(binary, x)).reshape(1, -1)
        got = emulated_int8(binary, xr, m, t, act, x_rounded=x_rounded)
        each_cta = emulated_int8(binary, x, m, t, act)
    outs = m.rows // 2 if act else m.rows
    assert got.dtype == mx.bfloat16 and got.shape == each_cta.shape == (1, outs)
    assert np.isfinite(np.array(got.astype(mx.float32))).all()
    np.testing.assert_array_equal(np.array(got.view(mx.uint16)),
                                  np.array(each_cta.view(mx.uint16)))


def test_gated_matmul_takes_the_kernel_where_it_applies(
    rng: np.random.Generator, monkeypatch: pytest.MonkeyPatch
) -> None:
    # BlockWeight.gated_matmul's choice, off the GPU: with CUDA's kernels pretended (their
    # launches recorded), up to INT8_ROWS rows of an INT8_TYPES weight are gemv_int8's gated
    # mode with the activation's kernel name (two rows of a small weight, as these are; two
    # of Q4_0 and four of the others of a large one, pretended by moving INT8_SMALL_WEIGHT);
    # more rows, another format, or an activation without a kernel name take the product (then
    # the split and act(g) * u; from 3 rows of Q4_0's file layout, Q4_1, Q5_1 and Q4_K in
    # bf16, on the tensor cores: gemm_blocks, which has no gated mode). GatedMLP names SiLU and
    # GELU.
    import vexel_core.quant.kernels as kernels
    import vexel_core.quant.weights as weights
    from vexel_core.model.layers import GatedMLP, gelu_tanh
    from vexel_core.model.linear import Linear
    from vexel_core.quant.kernels.library import KernelLibrary

    calls: list[tuple[T, int, object]] = []

    def gemv(self: KernelLibrary, x: mx.array, raw: mx.array, ggml_type: T,
             **kw: object) -> mx.array:
        calls.append((ggml_type, x.shape[0], kw.get("act")))
        rows = raw.shape[0] // (2 if kw.get("act") else 1)
        return mx.zeros((x.shape[0], rows), x.dtype)

    def gemm_blocks(self: KernelLibrary, x: mx.array, raw: mx.array, ggml_type: T,
                    **kw: object) -> mx.array:
        calls.append((ggml_type, x.shape[0], "gemm_blocks"))
        return mx.zeros((x.shape[0], raw.shape[0]), x.dtype)

    monkeypatch.setattr(kernels, "gpu_backend", lambda: "cuda")
    monkeypatch.setattr(weights, "select_for", lambda *a: QuantPath.GGUF_KERNEL)
    monkeypatch.setattr(KernelLibrary, "gemv", gemv)
    monkeypatch.setattr(KernelLibrary, "gemm_blocks", gemm_blocks)
    assert INT8_ROWS[T.Q4_0] == (2, 2) and INT8_ROWS[T.Q4_K] == INT8_ROWS[T.Q5_1] == (2, 4)
    small = [(T.Q4_0, 1, "silu", "silu"), (T.Q6_K, 1, "gelu_tanh", "gelu_tanh"),
             (T.Q5_K, 1, "silu", "silu"), (T.Q4_1, 1, "silu", "silu"),
             (T.Q5_0, 1, "gelu_tanh", "gelu_tanh"), (T.Q5_1, 2, "silu", "silu"),
             (T.Q4_0, 2, "silu", "silu"), (T.Q5_1, 3, "silu", "gemm_blocks"),
             (T.Q4_K, 2, "silu", "silu"), (T.Q4_K, 3, "silu", "gemm_blocks"),
             (T.Q3_K, 1, "silu", None), (T.Q8_0, 1, None, None)]
    large = [(T.Q4_0, 2, "silu", "silu"), (T.Q4_0, 3, "silu", "gemm_blocks"),
             (T.Q4_1, 4, "silu", "silu"), (T.Q4_1, 5, "silu", "gemm_blocks"),
             (T.Q4_K, 4, "silu", "silu"), (T.Q4_K, 5, "silu", "gemm_blocks")]
    library_module = importlib.import_module("vexel_core.quant.kernels.library")
    for small_weight, cases in ((library_module.INT8_SMALL_WEIGHT, small), (0, large)):
        monkeypatch.setattr(library_module, "INT8_SMALL_WEIGHT", small_weight)
        for ggml_type, rows, act, kernel in cases:
            cols = 256
            w = FORMATS[ggml_type].load(random_raw(ggml_type, 8, cols, rng), (8, cols))
            calls.clear()
            x = mx.zeros((rows, cols), mx.bfloat16)
            y = w.gated_matmul(x, mx.abs, act)
            assert y.shape == (rows, 4)
            assert calls == [(ggml_type, rows, kernel)], (small_weight, ggml_type, rows)
    gate_up = Linear(FORMATS[T.Q4_0].load(random_raw(T.Q4_0, 8, 256, rng), (8, 256)))
    down = Linear(weights.DenseWeight(mx.zeros((256, 4), mx.bfloat16)))
    for act_fn, name in ((nn.silu, "silu"), (gelu_tanh, "gelu_tanh"), (nn.relu, None)):
        calls.clear()
        GatedMLP(down, gate_up=gate_up, act=act_fn)(mx.zeros((1, 256), mx.bfloat16))
        assert calls == [(T.Q4_0, 1, name)]


# ---- Q4_0 repacked into 1,024-element super-blocks (vexel_core.quant.kernels.packed) ----

PACKED_PATHS = [p for p in PATHS if p != "reference"]


def test_packed_layout_round_trips(rng: np.random.Generator) -> None:
    # Bit for bit both ways, and where the layout puts each block: block k of a super-block
    # has its quants at bytes 16k.. and its d at 512 + 2k
    blocks = random_raw(T.Q4_0, 3, 2048, rng)
    packed = pack_q4_0(blocks)
    assert packed.shape == blocks.shape and packed.dtype == np.uint8
    np.testing.assert_array_equal(unpack_q4_0(packed), blocks)
    for row, sb, k in [(0, 0, 0), (1, 0, 31), (2, 1, 5)]:
        block = blocks[row, 576 * sb + 18 * k : 576 * sb + 18 * (k + 1)]
        np.testing.assert_array_equal(packed[row, 576 * sb + 16 * k :][:16], block[2:])
        np.testing.assert_array_equal(packed[row, 576 * sb + 512 + 2 * k :][:2], block[:2])


@pytest.mark.parametrize("path", PACKED_PATHS)
def test_packed_dequantize_equals_gguf_bit_for_bit(
    path: str, rng: np.random.Generator, request: pytest.FixtureRequest
) -> None:
    # The format Q4_0x1024 decodes as Q4_0 does: gguf's values of the file's blocks, exactly
    m = packed_matrix(rng, path)
    f32 = np.array(dequantized(path, m, mx.float32, request))
    np.testing.assert_array_equal(f32, m.values.astype(np.float32))
    bf16 = dequantized(path, m, mx.bfloat16, request)
    assert mx.array_equal(bf16, mx.array(m.values.astype(np.float32)).astype(mx.bfloat16)).item()


@pytest.mark.parametrize("path", PACKED_PATHS)
@pytest.mark.parametrize("n_tokens, tiling", [(1, None), (1, (4, 2, 2)), (3, None), (8, None)],
                         ids=["1", "1-float-kernel", "3", "8"])
def test_packed_product_equals_reference(
    path: str, n_tokens: int, tiling: tuple[int, int, int] | None, rng: np.random.Generator,
    request: pytest.FixtureRequest,
) -> None:
    # The packed weight's product against the file's values: one row on CUDA is gemv_int8's
    # (x rounded to int8), or the float kernel at CUDA's one-row tiling when asked for it
    if path == "emulated_metal" and tiling:
        pytest.skip("Metal's one row is the float kernel already")
    m = packed_matrix(rng, path)
    x = rng.normal(size=(n_tokens, PACKED_COLS)).astype(np.float32)
    y = np.array(product(path, mx.array(x), m, request, tiling))
    assert y.shape == (n_tokens, m.rows) and np.isfinite(y).all()
    xr = as_read(path, T.Q4_0, x, m.rows) if tiling is None else x.astype(np.float64)
    assert (np.abs(y - xr @ m.values.T) <= float32_bound(xr, m.values)).all()


@pytest.mark.parametrize("path", PATHS[:2])
@pytest.mark.parametrize("offset", [0, 2, 8])
def test_packed_int8_at_any_offset(path: str, offset: int, rng: np.random.Generator,
                                   request: pytest.FixtureRequest) -> None:
    # gemv_int8 reads a packed block's quants with one 16-byte load when the matrix starts on
    # 16 bytes (every chunk then does), with words_at when it does not: bf16 x, the buffer
    # `offset` bytes past alignment, a tiling whose warps each stream several rows
    if path == "gguf_kernel" and gpu_backend() != "cuda":
        pytest.skip("gemv_int8 is a CUDA kernel")
    m = packed_matrix(rng, path)
    xd = mx.array(rng.normal(size=(1, PACKED_COLS)).astype(np.float32)).astype(mx.bfloat16)
    for tiling in (default_int8_tiling(T.Q4_0, PACKED_COLS),
                   Int8Tiling(warps=2, stages=2, per_lane=2, ctas=2)):
        if path == "gguf_kernel":
            flat = mx.array(np.concatenate([np.zeros(offset, np.uint8), m.buffer.ravel()]))
            raw = flat[offset:].reshape(m.buffer.shape)
            got = library("cuda").gemv(xd, raw, T.Q4_0, tiling=tiling, init_value=NAN,
                                       packed=True)
        else:
            got = emulated_int8(request.getfixturevalue("emulator"), xd, m, tiling,
                                offset=offset)
        y = np.array(got.astype(mx.float32))
        assert np.isfinite(y).all(), tiling
        assert within_int8_bound(y, xd, m), tiling


@pytest.mark.parametrize("path", PATHS[:2])
@pytest.mark.parametrize("act", sorted(GATED_ACTS))
def test_packed_gated_int8_kernel(path: str, act: str, rng: np.random.Generator,
                                  request: pytest.FixtureRequest) -> None:
    # gemv_int8's gated mode on a packed gate/up weight, as test_gated_int8_kernel judges it
    if path == "gguf_kernel" and gpu_backend() != "cuda":
        pytest.skip("gemv_int8 is a CUDA kernel")
    pairs = EMULATED_PAIRS if path == "emulated_cuda" else GATED_PAIRS
    m = packed_matrix(rng, path, rows=2 * pairs)
    x = gated_x(m, rng, mx.bfloat16)
    for tiling in (default_int8_tiling(T.Q4_0, PACKED_COLS),
                   Int8Tiling(warps=2, stages=2, per_lane=2, ctas=2)):
        got = gated_product(path, x, m, act, tiling, request)
        assert got.dtype == mx.bfloat16 and got.shape == (1, pairs)
        y = np.array(got.astype(mx.float32))[0]
        assert np.isfinite(y).all()
        xr = int8_activations(np.array(x.astype(mx.float32)))[0]
        wg, wu = m.values[:pairs], m.values[pairs:]
        g, u = wg @ xr, wu @ xr
        bound = glu_bound(g, u, float32_bound(xr, wg), float32_bound(xr, wu), act, mx.bfloat16)
        assert (np.abs(y - GLU[act](g) * u) <= bound).all(), tiling


def test_packed_is_refused_where_it_does_not_apply() -> None:
    lib = library("cuda")
    with pytest.raises(ValueError, match="packed=True is a layout of Q4_0 alone; got ggml_type "
                                         "Q8_0"):
        lib.gemv(mx.zeros((1, 1024)), mx.zeros((1, 1088), mx.uint8), T.Q8_0, packed=True)
    # 1,056 columns: Q4_0 blocks, but not whole super-blocks
    with pytest.raises(ValueError, match=r"packed=True: raw must be uint8 \[rows, super-blocks "
                                         r"\* 576\] \(Q4_0 rows of a multiple of 1024"):
        lib.gemv(mx.zeros((1, 1056)), mx.zeros((1, 594), mx.uint8), T.Q4_0, packed=True)
    with pytest.raises(ValueError, match="packed=True: raw must be"):
        lib.dequantize(mx.zeros((2, 594), mx.uint8), T.Q4_0, packed=True)
    with pytest.raises(ValueError, match="blocks must be uint8 .* a multiple of 576"):
        pack_q4_0(np.zeros((2, 594), np.uint8))
    with pytest.raises(ValueError, match="packed must be uint8 .* a multiple of 576"):
        unpack_q4_0(np.zeros((2, 594), np.uint8))


def test_block_weight_packs_q4_0_on_cuda_alone(
    rng: np.random.Generator, monkeypatch: pytest.MonkeyPatch
) -> None:
    # BlockWeight off the GPU with CUDA's kernels pretended (their calls recorded): a Q4_0
    # weight of whole super-blocks keeps its blocks packed and says so to every kernel call;
    # stacking concatenates the packed rows; another format, other columns or a device without
    # the kernels keep the file's blocks.
    import vexel_core.quant.kernels as kernels
    import vexel_core.quant.weights as weights
    from vexel_core.quant.kernels.library import KernelLibrary

    calls: list[tuple[str, bool]] = []

    def gemv(self: KernelLibrary, x: mx.array, raw: mx.array, ggml_type: T,
             **kw: object) -> mx.array:
        calls.append(("gemv", bool(kw.get("packed"))))
        return mx.zeros((1, raw.shape[0] // (2 if kw.get("act") else 1)), x.dtype)

    def dequantize(self: KernelLibrary, raw: mx.array, ggml_type: T, dtype: mx.Dtype,
                   **kw: object) -> mx.array:
        calls.append(("dequant", bool(kw.get("packed"))))
        return mx.zeros((raw.shape[0], 2048), dtype)

    def load(ggml_type: T, cols: int) -> tuple[np.ndarray, weights.BlockWeight]:
        raw = random_raw(ggml_type, 4, cols, rng)
        w = FORMATS[ggml_type].load(raw, (4, cols))
        assert isinstance(w, weights.BlockWeight)
        return raw, w

    for backend in (None, "metal"):  # the CPU, and Apple's GPU, whichever device runs this
        monkeypatch.setattr(weights, "gpu_backend", lambda b=backend: b)
        assert not load(T.Q4_0, 2048)[1].packed, backend
    monkeypatch.setattr(kernels, "gpu_backend", lambda: "cuda")
    monkeypatch.setattr(weights, "gpu_backend", lambda: "cuda")
    monkeypatch.setattr(weights, "paths_on_this_device", lambda t: {QuantPath.GGUF_KERNEL})
    monkeypatch.setattr(weights, "select_for", lambda *a: QuantPath.GGUF_KERNEL)
    monkeypatch.setattr(KernelLibrary, "gemv", gemv)
    monkeypatch.setattr(KernelLibrary, "dequantize", dequantize)
    raw, w = load(T.Q4_0, 2048)
    assert w.packed
    np.testing.assert_array_equal(np.array(w.raw), pack_q4_0(raw))
    w.matmul(mx.zeros((1, 2048)))
    w.gated_matmul(mx.zeros((1, 2048), mx.bfloat16), mx.abs, "silu")
    w.take(mx.array([1, 3]))
    assert calls == [("gemv", True)] * 2 + [("dequant", True)]
    raw2, w2 = load(T.Q4_0, 2048)
    stacked = weights.BlockWeight.stack([w, w2])
    assert isinstance(stacked, weights.BlockWeight) and stacked.packed
    np.testing.assert_array_equal(np.array(stacked.raw), pack_q4_0(np.concatenate([raw, raw2])))
    for ggml_type, cols in ((T.Q8_0, 2048), (T.Q4_0, 32 * 97)):
        raw, w = load(ggml_type, cols)
        assert not w.packed
        np.testing.assert_array_equal(np.array(w.raw), raw)
    monkeypatch.setattr(weights, "paths_on_this_device", lambda t: {QuantPath.MLX_AFFINE})
    assert not load(T.Q4_0, 2048)[1].packed


@pytest.mark.gpu
def test_packed_weight_through_the_selected_path(rng: np.random.Generator) -> None:
    # On the GPU, a loaded Q4_0 weight of whole super-blocks as a model uses it: packed on CUDA
    # (the file's blocks on Metal), its products at 1, 2 and 40 rows, the gated product and
    # embedding rows against the file's values
    m = matrix(T.Q4_0, rng, cols=PACKED_COLS)
    weight = FORMATS[T.Q4_0].load(m.buffer, m.values.shape)
    assert weight.packed == (gpu_backend() == "cuda")
    for rows in (1, 2, 40):
        x = rng.normal(size=(rows, PACKED_COLS)).astype(np.float32)
        y = np.array(weight.matmul(mx.array(x)))
        xr = as_read_where_selected(T.Q4_0, x, m.rows)
        assert (np.abs(y - xr @ m.values.T) <= float32_bound(xr, m.values)).all(), rows
    ids = np.array([[4, 0], [36, 4]])
    np.testing.assert_array_equal(np.array(weight.take(mx.array(ids))),
                                  m.values.astype(np.float32)[ids])
    assert_rows_in_bfloat16(weight, ids, m.values)


@pytest.fixture
def quant_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Settings with ``engine.quant_path`` = the test's parameter, for the test's duration."""
    from vexel_core.config import load_settings, set_settings

    monkeypatch.setenv("VEXEL_ENGINE__QUANT_PATH", request.param)
    set_settings(load_settings())
    yield request.param
    set_settings(None)


@pytest.mark.parametrize("quant_path", ["auto", "kernel", "affine"], indirect=True)
@pytest.mark.parametrize("ggml_type", TYPES, ids=lambda t: t.name)
def test_linear_product_through_the_selected_path(
    ggml_type: T, quant_path: str, rng: np.random.Generator
) -> None:
    # BlockWeight.matmul as a model calls it, whichever path the setting selects: on a GPU,
    # "kernel" runs the matrix-vector kernels (1 and 2 rows; one Q4_0/Q8_0 row is gemv_int8's
    # on CUDA) and dequantize + matmul (80 rows); on the CPU every mode runs MLX's affine terms.
    m = matrix(ggml_type, rng)
    weight = FORMATS[ggml_type].load(m.buffer, m.values.shape)
    for shape in ((1, 1), (2, 1), (2, 40)):
        x = rng.normal(size=(*shape, m.values.shape[1])).astype(np.float32)
        y = np.array(weight.matmul(mx.array(x)))
        assert y.shape == (*shape, ROWS)
        xr = as_read_where_selected(ggml_type, x, m.rows)
        assert (np.abs(y - xr @ m.values.T) <= float32_bound(xr, m.values)).all()


@pytest.mark.gpu
@pytest.mark.parametrize("ggml_type", TYPES, ids=lambda t: t.name)
def test_kernel_only_weight_builds_no_affine_copy(ggml_type: T, rng: np.random.Generator) -> None:
    # Where the table sends every product to the kernels, loading keeps the blocks alone and
    # embedding rows come from the dequantization kernel, equal to gguf's values.
    if select(ggml_type, "cuda", 0) is not QuantPath.GGUF_KERNEL or gpu_backend() != "cuda":
        pytest.skip("the CUDA table does not send this format to the kernels")
    m = matrix(ggml_type, rng)
    weight = FORMATS[ggml_type].load(m.buffer, m.values.shape)
    assert "terms" not in weight.__dict__ and weight.nbytes == m.buffer.nbytes
    ids = np.array([[4, 0], [36, 4]])
    rows = np.array(weight.take(mx.array(ids)))
    np.testing.assert_array_equal(rows, m.values.astype(np.float32)[ids])
    assert_rows_in_bfloat16(weight, ids, m.values)


def assert_rows_in_bfloat16(weight: WeightTensor, ids: np.ndarray, values: np.ndarray) -> None:
    """Embedding rows asked for in bfloat16 (the kernel writes them so on a GPU) are the
    file's values rounded once, as MLX rounds float32: bit for bit."""
    rows = weight.take(mx.array(ids), mx.bfloat16)
    assert rows.dtype == mx.bfloat16
    want = mx.array(values.astype(np.float32)[ids]).astype(mx.bfloat16)
    np.testing.assert_array_equal(np.array(rows.astype(mx.float32)),
                                  np.array(want.astype(mx.float32)))


def test_selection_table_and_forced_paths() -> None:
    assert row_bucket(1) == row_bucket(8) == 0 and row_bucket(9) == 1 and row_bucket(512) == 2
    for t in TYPES:
        for bucket in range(3):
            assert select(t, "cpu", bucket) is QuantPath.MLX_AFFINE
            assert select(t, "cpu", bucket, "kernel") is QuantPath.MLX_AFFINE  # no CPU kernels
            for gpu in ("cuda", "metal"):
                assert select(t, gpu, bucket, "kernel") is QuantPath.GGUF_KERNEL
            for device in ("metal", "cpu"):
                assert select(t, device, bucket, "affine") is QuantPath.MLX_AFFINE
            # MLX's CUDA affine product cannot launch the group-128 terms of three K-quants
            assert select(t, "cuda", bucket, "affine") is (
                QuantPath.GGUF_KERNEL if t in (T.Q2_K, T.Q3_K, T.Q6_K) else QuantPath.MLX_AFFINE)
    # A type that is in no table (a float matrix) falls back to the reference.
    assert select(T.F16, "cuda", 0) is QuantPath.REFERENCE


@pytest.mark.parametrize("quant_path", ["affine", "kernel"], indirect=True)
def test_quant_path_setting_is_read_at_each_product(quant_path: str) -> None:
    expected = QuantPath.MLX_AFFINE
    if quant_path == "kernel" and gpu_backend() is not None:
        expected = QuantPath.GGUF_KERNEL
    assert select_for(T.Q4_0, mx.zeros((1, 256))) is expected


def test_kernels_refuse_what_they_cannot_compute() -> None:
    with pytest.raises(ValueError, match="no GPU kernel"):
        library("cuda").gemv(mx.zeros((1, 32)), mx.zeros((1, 18), mx.uint8), T.IQ4_NL)
    with pytest.raises(ValueError, match="raw must be uint8"):
        library("cuda").gemv(mx.zeros((1, 32)), mx.zeros((1, 17), mx.uint8), T.Q4_0)
    with pytest.raises(ValueError, match=r"x must be \[M, 32\].*M from 1 to 4"):  # gemv_int8's
        library("cuda").gemv(mx.zeros((1, 64)), mx.zeros((1, 18), mx.uint8), T.Q4_0)
    with pytest.raises(ValueError, match=r"x must be \[M, 32\]"):
        library("cuda").gemv(mx.zeros((2, 64)), mx.zeros((1, 18), mx.uint8), T.Q4_0)
    with pytest.raises(ValueError,
                       match="gemv_int8 is a CUDA kernel for Q4_0, Q4_1, Q4_K, Q5_0, Q5_1, "
                             "Q5_K, Q6_K, Q8_0"):
        library("cuda").gemv(mx.zeros((1, 256)), mx.zeros((1, 110), mx.uint8), T.Q3_K,
                             tiling=Int8Tiling())
    # the gated mode: gemv_int8's (one row, its formats), on gate and up rows in pairs
    with pytest.raises(ValueError, match="an even number of rows"):
        library("cuda").gemv(mx.zeros((1, 32)), mx.zeros((3, 18), mx.uint8), T.Q4_0, act="silu")
    with pytest.raises(ValueError, match="act in"):
        library("cuda").gemv(mx.zeros((1, 32)), mx.zeros((2, 18), mx.uint8), T.Q4_0, act="relu")
    with pytest.raises(ValueError, match="no tile or GemvTiling"):
        library("cuda").gemv(mx.zeros((1, 32)), mx.zeros((2, 18), mx.uint8), T.Q4_0,
                             tiling=GemvTiling(), act="silu")
    with pytest.raises(ValueError, match=r"x must be \[M, 32\].*M from 1 to 4"):
        library("cuda").gemv(mx.zeros((5, 32)), mx.zeros((2, 18), mx.uint8), T.Q4_0, act="silu")
    with pytest.raises(ValueError, match="holds x in registers, which takes one activation row"):
        library("cuda").gemv(mx.zeros((2, 32)), mx.zeros((2, 18), mx.uint8), T.Q4_0,
                             tiling=Int8Tiling(x_in_registers=True))
    with pytest.raises(ValueError, match=r"gemv_add_norm: x must be one row \[1, K\]"):
        library("cuda").gemv_add_norm(mx.zeros((2, 32)), mx.zeros((2, 18), mx.uint8), T.Q4_0,
                                      mx.zeros((1, 2)), mx.ones((2,)), 1e-5, add_norm_scratch())
    # round_x and the product on its buffer
    lib = library("cuda")
    for shape, dtype in (((2, 64), mx.float32), ((1, 48), mx.float32), ((1, 64), mx.int32)):
        with pytest.raises(ValueError, match=r"round_x: x must be \[1, K\]"):
            lib.round_x(mx.zeros(shape, dtype))
    with pytest.raises(ValueError, match="round_x is a CUDA kernel"):
        library("metal").round_x(mx.zeros((1, 64)))
    raw, buffer = mx.zeros((1, 18), mx.uint8), mx.zeros((1, rounded_x_bytes(32)), mx.uint8)
    with pytest.raises(ValueError, match=r"x must be round_x's buffer .* uint8 \[1, 40\]"):
        lib.gemv(mx.zeros((1, 32)), raw, T.Q4_0, x_rounded="shared", dtype=mx.bfloat16)
    with pytest.raises(ValueError, match=r"uint8 \[1, 40\]; got \(1, 80\)"):
        lib.gemv(mx.zeros((1, 80), mx.uint8), raw, T.Q4_0, x_rounded="global",
                 dtype=mx.bfloat16)
    with pytest.raises(ValueError, match="x_rounded needs dtype"):
        lib.gemv(buffer, raw, T.Q4_0, x_rounded="shared")
    with pytest.raises(ValueError, match="for x_rounded alone"):
        lib.gemv(mx.zeros((1, 32)), raw, T.Q4_0, dtype=mx.bfloat16)
    with pytest.raises(ValueError, match="x_rounded must be one of"):
        lib.gemv(buffer, raw, T.Q4_0, x_rounded="l1", dtype=mx.bfloat16)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="no tile or GemvTiling"):
        lib.gemv(buffer, raw, T.Q4_0, tile=1, x_rounded="shared", dtype=mx.bfloat16)
    with pytest.raises(ValueError, match="gemv_int8 is a CUDA kernel for"):
        lib.gemv(buffer, mx.zeros((1, 84), mx.uint8), T.Q2_K, x_rounded="shared",
                 dtype=mx.bfloat16)
    if gpu_backend() is None:
        with pytest.raises(ValueError, match="needs MLX's default device to be a GPU"):
            gguf_matmul(mx.zeros((1, 32)), mx.zeros((1, 18), mx.uint8), T.Q4_0)


def test_cuda_headers_are_included_by_path(tmp_path: Path) -> None:
    # MLX copies and hashes a kernel's whole source at every call and launch: the CUDA
    # header names the files (NVRTC reads them once), in the order the kernels need them.
    header, _ = kernel_source("cuda", "gemv")
    lines = header.split("\n")[:-1]
    assert all(line.startswith('#include "/') and line.endswith('"') for line in lines)
    assert [Path(line[10:-1]).name for line in lines] == [
        "prelude.cuh", "decode.h", "formats.h", "memory.cuh", "kernels.cuh", "gemv_int8.cuh",
        "gemv_packed.cuh", "feed_forward.cuh", "gemm_packed.cuh", "gemm_blocks.cuh"]
    assert all(Path(line[10:-1]).is_file() for line in lines)
    # a path a quoted include cannot spell is inlined instead
    odd = tmp_path / 'say "hi".cuh'
    odd.write_text("#define HI 1\n")
    plain = tmp_path / "plain.cuh"
    plain.write_text("#define PLAIN 1\n")
    assert cuda_header([odd, plain]) == f'#define HI 1\n\n#include "{plain.resolve()}"\n'
