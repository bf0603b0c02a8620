"""`Linear`, `Embedding` and `load_weight` over registered formats, against gguf's values."""

from __future__ import annotations

import os
import subprocess
import sys

import mlx.core as mx
import mlx.nn as nn
import numpy as np
import pytest
from gguf import GGMLQuantizationType as T
from gguf.quants import dequantize as gguf_dequantize

from tests.test_quant_kernels import as_read_where_selected, float32_bound
from vexel_core.errors import RegistryMiss, TensorDataError
from vexel_core.model.layers import GatedMLP, gelu_tanh
from vexel_core.model.linear import Embedding, Linear, load_weight
from vexel_core.model.metadata import activation_dtype
from vexel_core.plugins import PluginHost, load_plugins
from vexel_core.quant.base import Activation, gated
from vexel_core.quant.measure import random_raw

ROWS, COLS = 6, 512  # several blocks per row for every type (two K-quant super-blocks)
ALL_TYPES = [T.F32, T.F16, T.BF16, T.Q8_0, T.Q4_0, T.Q4_1, T.Q5_0, T.Q5_1,
             T.Q2_K, T.Q3_K, T.Q4_K, T.Q5_K, T.Q6_K]


@pytest.fixture(scope="module")
def host() -> PluginHost:
    return load_plugins(strict=True, allow=["core"])


def within_f32_accumulation(got: np.ndarray, x: np.ndarray, w: np.ndarray) -> bool:
    """Float32 worst-case rounding of a length-K dot product: K * 2^-24 * sum|x_j w_j|
    (measured errors of every format stay under 2% of it; see test_quant_formats)."""
    bound = x.shape[-1] * 2.0**-24 * (np.abs(x) @ np.abs(w).T)
    return bool((np.abs(got - x @ w.T) <= bound).all())


@pytest.mark.parametrize("ggml_type", ALL_TYPES, ids=lambda t: t.name)
def test_linear_with_bias_on_batched_input(
    host: PluginHost, ggml_type: T, rng: np.random.Generator
) -> None:
    raw = random_raw(ggml_type, ROWS, COLS, rng)
    w = gguf_dequantize(raw, ggml_type).astype(np.float64)
    bias = rng.normal(size=ROWS).astype(np.float32)
    layer = Linear(load_weight(host, ggml_type, raw, (ROWS, COLS)), mx.array(bias))
    x = rng.normal(size=(2, 3, COLS)).astype(np.float32)  # [batch, tokens, cols]
    y = layer(mx.array(x))
    assert y.shape == (2, 3, ROWS) and y.dtype == mx.float32
    assert within_f32_accumulation(np.array(y) - bias, x, w)


@pytest.mark.parametrize("ggml_type", ALL_TYPES, ids=lambda t: t.name)
def test_linear_returns_the_activation_dtype(
    host: PluginHost, ggml_type: T, rng: np.random.Generator
) -> None:
    raw = random_raw(ggml_type, ROWS, COLS, rng)
    layer = Linear(load_weight(host, ggml_type, raw, (ROWS, COLS)))
    for dtype in (mx.float16, mx.bfloat16, mx.float32):
        assert layer(mx.ones((2, COLS), dtype=dtype)).dtype == dtype


@pytest.mark.parametrize(("device", "file_type", "dtype"), [
    ("cpu", "F32", mx.float32), ("cpu", "F16", mx.float32), ("cpu", "Q4_0", mx.float32),
    ("gpu", "F32", mx.float32), ("gpu", "F16", mx.float16), ("gpu", "BF16", mx.bfloat16),
    ("gpu", "Q8_0", mx.bfloat16), ("gpu", "Q4_K", mx.bfloat16)])
def test_models_compute_in_their_files_float_type_on_a_gpu(
    monkeypatch: pytest.MonkeyPatch, device: str, file_type: str, dtype: mx.Dtype
) -> None:
    # The CPU computes every file in float32; a GPU keeps an F32 file's type (as llama.cpp
    # computes it) and an F16 file's, and computes the rest in bfloat16. The device is only
    # pretended: no array is made.
    monkeypatch.setattr(mx, "default_device", lambda: mx.Device(getattr(mx, device)))
    assert activation_dtype(file_type) == dtype


# A float32 product of 256x4096 by 4096x256 random normals in a fresh process that imported
# vexel_core: its error relative to float64's, as a Frobenius norm ratio. Float32 keeps 24
# significant bits (2^-24 ~ 6e-8 a rounding), so even sequential sums of 4,096 terms stay near
# 64 * 6e-8 ~ 4e-6; TF32 rounds each input to 11 bits (2^-11 ~ 5e-4), ~1e-3 of the result.
FLOAT32_PRODUCT = """
import os
import vexel_core
import mlx.core as mx
import numpy as np
a, b = mx.random.normal((256, 4096)), mx.random.normal((4096, 256))
exact = np.array(a).astype(np.float64) @ np.array(b).astype(np.float64)
error = np.linalg.norm(np.array(a @ b) - exact) / np.linalg.norm(exact)
print(os.environ.get("MLX_ENABLE_TF32"), error)
"""


def _float32_product(env: dict[str, str]) -> tuple[str, float]:
    out = subprocess.run([sys.executable, "-c", FLOAT32_PRODUCT], env=env, check=True,
                         capture_output=True, text=True).stdout.split()
    return out[0], float(out[1])


def test_importing_vexel_keeps_float32_products_in_float32() -> None:
    # vexel_core turns MLX's reduced-precision float32 products off by default (an F32 file
    # computes in float32); a user's own setting stands.
    env = {k: v for k, v in os.environ.items() if k != "MLX_ENABLE_TF32"}
    assert _float32_product(env)[0] == "0"
    assert _float32_product({**env, "MLX_ENABLE_TF32": "1"})[0] == "1"


@pytest.mark.gpu
def test_float32_products_on_the_gpu_are_float32() -> None:
    # The GPU's own float32 product in a process that set nothing: within float32's error
    # (4e-6, above), where MLX's default TF32 gives ~1e-3. 5e-5 lies between them.
    env = {k: v for k, v in os.environ.items() if k != "MLX_ENABLE_TF32"}
    setting, error = _float32_product(env)
    assert setting == "0" and error < 5e-5, error


@pytest.mark.parametrize("ggml_type", [T.Q2_K, T.Q3_K, T.Q6_K], ids=lambda t: t.name)
def test_group16_kquants_stay_accurate_with_float16_activations(
    host: PluginHost, ggml_type: T, rng: np.random.Generator
) -> None:
    # Their MLX terms cancel each other, so they compute in float32 and round once at the end.
    raw = random_raw(ggml_type, ROWS, COLS, rng)
    w = gguf_dequantize(raw, ggml_type).astype(np.float64)
    layer = Linear(load_weight(host, ggml_type, raw, (ROWS, COLS)))
    x16 = mx.array(rng.normal(size=(3, COLS))).astype(mx.float16)
    x = np.array(x16.astype(mx.float32)).astype(np.float64)
    y = np.array(layer(x16).astype(mx.float32))
    exact = x @ w.T
    # Rounding the result to float16 (half an ulp: 2^-11 relative) on top of the float32 bound.
    bound = 2.0**-11 * np.abs(exact) + COLS * 2.0**-24 * (np.abs(x) @ np.abs(w).T)
    assert (np.abs(y - exact) <= bound).all()


@pytest.mark.parametrize("ggml_type", ALL_TYPES, ids=lambda t: t.name)
def test_embedding_rows_equal_the_dequantized_rows(
    host: PluginHost, ggml_type: T, rng: np.random.Generator
) -> None:
    raw = random_raw(ggml_type, ROWS, COLS, rng)
    table = gguf_dequantize(raw, ggml_type)
    embed = Embedding(load_weight(host, ggml_type, raw, (ROWS, COLS)))
    ids = rng.integers(0, ROWS, size=(2, 5))
    rows = embed(mx.array(ids))
    assert rows.shape == (2, 5, COLS)
    np.testing.assert_array_equal(np.array(rows.astype(mx.float32)), table[ids])


@pytest.mark.parametrize("ggml_type", [T.Q4_K, T.Q2_K, T.BF16], ids=lambda t: t.name)
def test_tied_embedding_as_output_projection(
    host: PluginHost, ggml_type: T, rng: np.random.Generator
) -> None:
    raw = random_raw(ggml_type, ROWS, COLS, rng)
    w = gguf_dequantize(raw, ggml_type).astype(np.float64)
    head = Embedding(load_weight(host, ggml_type, raw, (ROWS, COLS))).as_linear()
    x = rng.normal(size=(3, COLS)).astype(np.float32)
    assert within_f32_accumulation(np.array(head(mx.array(x))), x, w)


def test_linear_composes_inside_a_module(host: PluginHost, rng: np.random.Generator) -> None:
    class TwoLayers(nn.Module):
        def __init__(self, first: Linear, second: Linear) -> None:
            super().__init__()
            self.first, self.second = first, second

        def __call__(self, x: mx.array) -> mx.array:
            return self.second(self.first(x))

    raw1, raw2 = random_raw(T.Q8_0, 256, 64, rng), random_raw(T.Q5_K, 32, 256, rng)
    w1 = gguf_dequantize(raw1, T.Q8_0).astype(np.float64)
    w2 = gguf_dequantize(raw2, T.Q5_K).astype(np.float64)
    model = TwoLayers(Linear(load_weight(host, T.Q8_0, raw1, (256, 64))),
                      Linear(load_weight(host, T.Q5_K, raw2, (32, 256))))
    x = rng.normal(size=(2, 64)).astype(np.float32)
    # Each product against the float64 product of the activations as it reads them (on CUDA
    # both round their two rows to int8 blocks first), within float32's bound. The second
    # reads the first's own output: a product's bits are the same every run, and rounding to
    # int8 would turn even float32's error in the hidden values into a step of a block's scale.
    hidden = np.array(model.first(mx.array(x)))
    xr = as_read_where_selected(T.Q8_0, x, 256)
    assert (np.abs(hidden - xr @ w1.T) <= float32_bound(xr, w1)).all()
    hr = as_read_where_selected(T.Q5_K, hidden, 32)
    assert (np.abs(np.array(model(mx.array(x))) - hr @ w2.T) <= float32_bound(hr, w2)).all()


def test_load_weight_names_the_available_formats(host: PluginHost) -> None:
    with pytest.raises(RegistryMiss, match=r"'IQ4_NL'; available: BF16, F16, F32, Q2_K"):
        load_weight(host, T.IQ4_NL, np.zeros(18, dtype=np.uint8), (1, 32))
    with pytest.raises(RegistryMiss, match=r"'GGML type 99'; available: BF16"):
        load_weight(host, 99, np.zeros(18, dtype=np.uint8), (1, 32))


def test_load_weight_names_the_tensor_whose_bytes_do_not_fit(host: PluginHost) -> None:
    with pytest.raises(TensorDataError,
                       match=r"tensor 'blk.0.attn_q.weight': Q8_0 matrix of shape \(2, 64\): "
                             r"expected 136 bytes \(2 rows of 68\), got 100"):
        load_weight(host, T.Q8_0, np.zeros(100, dtype=np.uint8), (2, 64),
                    name="blk.0.attn_q.weight")


def test_linear_refuses_a_bias_of_the_wrong_size(host: PluginHost) -> None:
    weight = load_weight(host, T.F32, np.zeros(4 * 8 * 4, dtype=np.uint8), (4, 8))
    with pytest.raises(TensorDataError, match=r"bias of shape \(5,\) .* expected \(4,\)"):
        Linear(weight, mx.zeros(5))


@pytest.mark.parametrize("ggml_type", ALL_TYPES, ids=lambda t: t.name)
def test_stacked_weights_multiply_as_their_parts(
    host: PluginHost, ggml_type: T, rng: np.random.Generator
) -> None:
    # Fused projections (q, k, v) stack their rows; each output column must be the product
    # of its own part as the part computes it alone, up to float32 summation order (a float
    # GEMM may block the longer matrix differently): 1e-5 against outputs of size ~1-10.
    rows = [6, 2, 3]
    raws = [random_raw(ggml_type, r, COLS, rng) for r in rows]
    parts = [load_weight(host, ggml_type, raw, (len(raw), COLS)) for raw in raws]
    stacked = type(parts[0]).stack(parts)
    assert stacked is not None and stacked.shape == (sum(rows), COLS)
    x = mx.array(rng.normal(size=(3, COLS)).astype(np.float32))
    expected = mx.concatenate([p.matmul(x) for p in parts], axis=-1)
    np.testing.assert_allclose(np.array(stacked.matmul(x)), np.array(expected), rtol=0, atol=1e-5)
    # Stacked from what the parts built, it is stored as a load of the stacked bytes would be
    # (checked before `dequantize`, which builds the affine terms where the GPU had none).
    whole = load_weight(host, ggml_type, np.concatenate(raws), (sum(rows), COLS))
    assert stacked.nbytes == whole.nbytes
    w = np.concatenate([gguf_dequantize(raw, ggml_type) for raw in raws])
    np.testing.assert_array_equal(np.array(stacked.dequantize()), w.astype(np.float32))


def test_weights_of_different_formats_do_not_stack(
    host: PluginHost, rng: np.random.Generator
) -> None:
    a = load_weight(host, T.Q4_0, random_raw(T.Q4_0, 2, COLS, rng), (2, COLS))
    b = load_weight(host, T.Q8_0, random_raw(T.Q8_0, 2, COLS, rng), (2, COLS))
    c = load_weight(host, T.F16, random_raw(T.F16, 2, COLS, rng), (2, COLS))
    assert type(a).stack([a, b]) is None
    assert type(a).stack([a, c]) is None and type(c).stack([c, a]) is None


@pytest.mark.parametrize("ggml_type", [T.Q4_0, T.Q6_K, T.F16], ids=lambda t: t.name)
def test_stacking_keeps_no_reference_to_its_parts(
    host: PluginHost, ggml_type: T, rng: np.random.Generator
) -> None:
    # The parts are dropped once stacked: a reference kept to them (a lazy conversion that
    # reads them later, say) would hold every fused weight twice on the device.
    import gc
    import weakref

    raws = [random_raw(ggml_type, r, COLS, rng) for r in (4, 2)]
    parts = [load_weight(host, ggml_type, raw, (len(raw), COLS)) for raw in raws]
    stacked = type(parts[0]).stack(parts)
    refs = [weakref.ref(p) for p in parts]
    del parts
    gc.collect()
    assert all(r() is None for r in refs)
    assert stacked is not None
    w = np.concatenate([gguf_dequantize(raw, ggml_type) for raw in raws]).astype(np.float32)
    np.testing.assert_array_equal(np.array(stacked.dequantize()), w)


@pytest.mark.parametrize("act", [nn.silu, gelu_tanh, nn.relu], ids=["silu", "gelu_tanh", "relu"])
@pytest.mark.parametrize("ggml_type", [T.Q4_0, T.Q6_K, T.F16], ids=lambda t: t.name)
def test_gated_mlp_through_the_fallback_is_unchanged(
    host: PluginHost, ggml_type: T, act: Activation, rng: np.random.Generator
) -> None:
    # GatedMLP with a fused gate/up weight asks the weight for act(g) * u; where no kernel
    # fuses it (on the CPU, every kind; relu has no kernel anywhere), the weight multiplies,
    # splits and applies the compiled act(g) * u: exactly the graph of before, a bias (added
    # before the activation) included. One row and three, float32 and bfloat16.
    ffn = 32  # the down product's columns: one block
    gate_up = load_weight(host, ggml_type, random_raw(ggml_type, 2 * ffn, COLS, rng),
                          (2 * ffn, COLS))
    down = Linear(load_weight(host, T.Q8_0, random_raw(T.Q8_0, COLS, ffn, rng), (COLS, ffn)))
    bias = mx.array(rng.normal(size=2 * ffn).astype(np.float32))
    for fused in (Linear(gate_up), Linear(gate_up, bias)):
        mlp = GatedMLP(down, gate_up=fused, act=act)
        for rows, dtype in ((1, mx.float32), (3, mx.bfloat16)):
            x = mx.array(rng.normal(size=(rows, COLS)).astype(np.float32)).astype(dtype)
            g, u = mx.split(fused(x), 2, axis=-1)  # GatedMLP.__call__ before the kernel
            before = down(gated(act)(g, u))
            assert mx.array_equal(mlp(x), before).item()
