"""Tensor formats against gguf's reference dequantization, on fresh random blocks.

Judges: `gguf.quants.dequantize` for values (bit for bit), and a float64 product of its
values for the MLX representations.
"""

from __future__ import annotations

import mlx.core as mx
import numpy as np
import pytest
from gguf import GGMLQuantizationType as T
from gguf.quants import dequantize as gguf_dequantize

from tests.test_quant_kernels import (
    as_read_where_selected,
    assert_rows_in_bfloat16,
    float32_bound,
)
from vexel_core.errors import RegistryMiss, TensorDataError
from vexel_core.plugins import load_plugins
from vexel_core.quant.formats import ALL_FORMATS
from vexel_core.quant.measure import random_raw
from vexel_core.quant.selection import QuantPath, paths_on_this_device
from vexel_core.quant.weights import BlockWeight

FORMATS = {fmt.name: fmt for fmt in ALL_FORMATS}
ALL_TYPES = [T.F32, T.F16, T.BF16, T.Q8_0, T.Q4_0, T.Q4_1, T.Q5_0, T.Q5_1,
             T.Q2_K, T.Q3_K, T.Q4_K, T.Q5_K, T.Q6_K]
# Formats whose MLX form is one affine matrix with GGUF's own codes: (bits, group size).
EXACT_AFFINE = {T.Q4_0: (4, 32), T.Q4_1: (4, 32), T.Q5_0: (5, 32), T.Q5_1: (5, 32),
                T.Q8_0: (8, 32), T.Q4_K: (4, 32), T.Q5_K: (5, 32)}
# Bits per weight of the MLX representation, from each module's docstring: codes plus
# scales and biases (float16 at 32 bits per group, float32 at 64).
BITS_PER_WEIGHT = {T.F32: 32, T.F16: 16, T.BF16: 16, T.Q8_0: 9, T.Q4_0: 5, T.Q4_1: 5,
                   T.Q5_0: 6, T.Q5_1: 6, T.Q2_K: 6.875, T.Q3_K: 8.25, T.Q4_K: 6, T.Q5_K: 7,
                   T.Q6_K: 13.5}
COLS = 512  # two K-quant super-blocks, sixteen 32-element blocks per row


def reference(raw: np.ndarray, ggml_type: T) -> np.ndarray:
    values = gguf_dequantize(raw, ggml_type)
    assert np.isfinite(values).all(), "random blocks must decode to finite values"
    return values


def test_every_type_has_a_format() -> None:
    assert sorted(FORMATS) == sorted(t.name for t in ALL_TYPES)


@pytest.mark.parametrize("ggml_type", ALL_TYPES, ids=lambda t: t.name)
def test_dequantize_equals_gguf_bit_for_bit(ggml_type: T, rng: np.random.Generator) -> None:
    fmt = FORMATS[ggml_type.name]
    raw = random_raw(ggml_type, 3, COLS, rng)
    expected = reference(raw, ggml_type)
    # The numpy contract method and the MLX reference it wraps, on 2-D and 1-D input.
    np.testing.assert_array_equal(fmt.dequantize(raw), expected)
    np.testing.assert_array_equal(np.array(fmt.dequantize_mlx(mx.array(raw))), expected)
    np.testing.assert_array_equal(fmt.dequantize(raw[1]), expected[1])


@pytest.mark.parametrize("ggml_type", [T.F16, T.F32, T.BF16], ids=lambda t: t.name)
def test_float_formats_keep_special_values(ggml_type: T, rng: np.random.Generator) -> None:
    # Every bit pattern, NaN and infinity included, decodes as gguf decodes it.
    raw = rng.integers(0, 256, size=(4, 64 * 4), dtype=np.uint8)
    np.testing.assert_array_equal(FORMATS[ggml_type.name].dequantize(raw),
                                  gguf_dequantize(raw, ggml_type))


@pytest.mark.parametrize("n_tokens", [1, 3])
@pytest.mark.parametrize("ggml_type", ALL_TYPES, ids=lambda t: t.name)
def test_product_equals_reference(ggml_type: T, n_tokens: int, rng: np.random.Generator) -> None:
    raw = random_raw(ggml_type, 3, COLS, rng)
    w = reference(raw, ggml_type).astype(np.float64)
    weight = FORMATS[ggml_type.name].load(raw, (3, COLS))
    x = rng.normal(size=(n_tokens, COLS)).astype(np.float32)
    y = weight.matmul(mx.array(x))
    assert y.dtype == mx.float32 and y.shape == (n_tokens, 3)
    # The weights are exact, so only float32 accumulation differs from the float64 product of
    # the activations as the product reads them (on CUDA a few rows, `INT8_ROWS`, of Q4_0,
    # Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K or Q6_K are rounded to int8 blocks first, as
    # llama.cpp's quantize_q8_1 rounds them).
    # Its worst-case bound for a length-K dot product is K * 2^-24 * sum|x_j w_j|; measured
    # errors are under 2% of it (Q6_K, whose two terms cancel, is the largest).
    xr = as_read_where_selected(ggml_type, x, 3)
    assert (np.abs(np.array(y) - xr @ w.T) <= float32_bound(xr, w)).all()


@pytest.mark.parametrize("ggml_type", ALL_TYPES, ids=lambda t: t.name)
def test_take_and_dequantize_reproduce_the_reference(
    ggml_type: T, rng: np.random.Generator
) -> None:
    raw = random_raw(ggml_type, 5, COLS, rng)
    expected = reference(raw, ggml_type)
    weight = FORMATS[ggml_type.name].load(raw, (5, COLS))
    ids = np.array([[4, 0], [2, 4]])
    rows = np.array(weight.take(mx.array(ids)).astype(mx.float32))
    np.testing.assert_array_equal(rows, expected[ids])
    assert_rows_in_bfloat16(weight, ids, expected)  # the model's embedding lookup
    np.testing.assert_array_equal(np.array(weight.dequantize()), expected)


@pytest.mark.parametrize("ggml_type", list(EXACT_AFFINE), ids=lambda t: t.name)
def test_exact_types_are_one_mlx_affine_triplet(ggml_type: T, rng: np.random.Generator) -> None:
    raw = random_raw(ggml_type, 2, COLS, rng)
    weight = FORMATS[ggml_type.name].load(raw, (2, COLS))
    (term,) = weight.terms
    m = term.matrix
    assert term.span == 1 and (m.bits, m.group_size) == EXACT_AFFINE[ggml_type]
    assert m.packed.dtype == mx.uint32 and m.packed.shape == (2, COLS * m.bits // 32)
    # MLX's own dequantization of the triplet, in float32, gives gguf's values.
    got = mx.dequantize(m.packed, m.scales.astype(mx.float32), m.biases.astype(mx.float32),
                        group_size=m.group_size, bits=m.bits)
    np.testing.assert_array_equal(np.array(got), reference(raw, ggml_type))


@pytest.mark.parametrize("ggml_type", ALL_TYPES, ids=lambda t: t.name)
def test_memory_cost_is_as_documented(ggml_type: T, rng: np.random.Generator) -> None:
    """A loaded block weight holds what this device's products read: the MLX form where
    MLX's affine path serves them (`BITS_PER_WEIGHT`), the file's blocks where the GGUF
    kernels do (a CUDA model holds no affine copy)."""
    fmt = FORMATS[ggml_type.name]
    raw = random_raw(ggml_type, 2, COLS, rng)
    weight = fmt.load(raw, (2, COLS))
    bits = BITS_PER_WEIGHT[ggml_type]
    if isinstance(weight, BlockWeight):
        paths = paths_on_this_device(ggml_type)
        bits = ((bits if QuantPath.MLX_AFFINE in paths else 0)
                + (8 * fmt.block_bytes / fmt.block_elems if QuantPath.GGUF_KERNEL in paths else 0))
    assert 8 * weight.nbytes / (2 * COLS) == bits


@pytest.mark.parametrize("ggml_type", [T.Q4_0, T.Q6_K], ids=lambda t: t.name)
def test_block_weights_keep_raw_bytes(ggml_type: T, rng: np.random.Generator) -> None:
    raw = random_raw(ggml_type, 3, COLS, rng)
    weight = FORMATS[ggml_type.name].load(raw, (3, COLS))
    assert weight.ggml_type == ggml_type
    assert weight.raw.dtype == mx.uint8
    np.testing.assert_array_equal(np.array(weight.raw), raw)


def test_scales_that_overflow_float16_stay_float32(rng: np.random.Generator) -> None:
    # Q6_K's bias is 4096 * d: d = 100 overflows float16, so the matrix must keep float32.
    raw = random_raw(T.Q6_K, 2, 256, rng)
    raw[:, 208:210] = np.array([100.0], dtype=np.float16).view(np.uint8)
    weight = FORMATS["Q6_K"].load(raw, (2, 256))
    np.testing.assert_array_equal(np.array(weight.dequantize()), reference(raw, T.Q6_K))


def test_formats_register_through_the_plugin_host() -> None:
    host = load_plugins(strict=True, allow=["core"])
    assert host.quant_formats.names() == sorted(t.name for t in ALL_TYPES)
    q6k = host.quant_formats.get(T.Q6_K.name)
    assert q6k.ggml_type == T.Q6_K and (q6k.block_elems, q6k.block_bytes) == (256, 210)
    assert host.quant_formats.entry("Q6_K").plugin == "core"
    with pytest.raises(RegistryMiss, match="IQ2_XXS.*available: BF16, F16"):
        host.quant_formats.get(T.IQ2_XXS.name)


@pytest.mark.parametrize(
    ("shape", "n_bytes", "message"),
    [
        ((3, 512), 3 * 288 - 4, r"Q4_K matrix of shape \(3, 512\): expected 864 bytes "
                                r"\(3 rows of 288\), got 860"),
        ((3, 500), 3 * 288, r"500 elements is not a whole number of 256-element Q4_K blocks"),
        ((1536,), 3 * 288, r"expected a 2-D shape \(rows, cols\)"),
    ],
)
def test_bytes_that_do_not_fit_the_shape_are_refused(
    shape: tuple[int, ...], n_bytes: int, message: str
) -> None:
    with pytest.raises(TensorDataError, match=message):
        FORMATS["Q4_K"].load(np.zeros(n_bytes, dtype=np.uint8), shape)


def test_float_bytes_that_do_not_fit_the_shape_are_refused() -> None:
    with pytest.raises(TensorDataError, match=r"F16 matrix .* expected 24 bytes .* got 20"):
        FORMATS["F16"].load(np.zeros(20, dtype=np.uint8), (3, 4))


@pytest.mark.parametrize("ggml_type", [T.Q5_0, T.Q2_K, T.Q6_K], ids=lambda t: t.name)
def test_loading_a_slice_of_rows_at_a_time_gives_the_same_weight(
    ggml_type: T, rng: np.random.Generator, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vexel_core.quant import blocks

    monkeypatch.setattr(blocks, "_ELEMENTS_PER_STEP", 2 * COLS)  # two rows per slice
    raw = random_raw(ggml_type, 5, COLS, rng)
    if ggml_type == T.Q6_K:  # one overflowing scale in the last slice: all of it goes float32
        raw[4, 208:210] = np.array([100.0], dtype=np.float16).view(np.uint8)
    weight = FORMATS[ggml_type.name].load(raw, (5, COLS))
    np.testing.assert_array_equal(np.array(weight.dequantize()), reference(raw, ggml_type))
    x = rng.normal(size=(2, COLS)).astype(np.float32)
    w = reference(raw, ggml_type).astype(np.float64)
    xr = as_read_where_selected(ggml_type, x, 5)  # on CUDA Q5_0's and Q6_K's are int8 blocks
    assert (np.abs(np.array(weight.matmul(mx.array(x))) - xr @ w.T) <= float32_bound(xr, w)).all()
