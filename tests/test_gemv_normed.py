"""``gemv_int8``'s normed mode (cuda/gemv_int8.cuh, XPRE 3; `KernelLibrary.gemv_normed`): the
residual stream's add and RMS norm made inside the product, on fresh random blocks every run.

The judge is numpy: the residual ``T(x + delta)`` bit for bit, and the norm's values repeated
bit for bit, since the kernel makes them with IEEE-rounded operations in a fixed order (each
thread's 32-value blocks in turn, the warp's xor tree, the warps in turn; rsqrt correctly
rounded) which `normed_reference` follows; the product is then judged as every ``gemv_int8``
product is, by float64 arithmetic on those values rounded to int8 (`int8_activations`),
within float32's accumulation bound plus the output's rounding (or `glu_bound`, gated).

Paths: ``emulated_cuda`` (the CUDA source on the CPU, outputs NaN-filled) and ``gguf_kernel``
(the H200, marked ``gpu``, outputs poisoned with NaN). Rows not a multiple of any tiling's
warps; columns of several chunks with a partial last one, and rows shorter than a CTA's
threads (threads with no block of x); the weight one row into its buffer.
"""

from __future__ import annotations

from pathlib import Path

import mlx.core as mx
import mlx.nn as nn
import numpy as np
import pytest
from gguf import GGMLQuantizationType as T

from tests import emulation
from tests.test_quant_kernels import (
    EMULATED_PAIRS,
    FORMATS,
    GLU,
    UNIT_ROUNDOFF,
    Matrix,
    float32_bound,
    glu_bound,
    int8_activations,
    matrix,
    packed_matrix,
)
from vexel_core.quant.kernels import gpu_backend, library
from vexel_core.quant.kernels.library import (
    GATED_ACTS,
    INT8_TYPES,
    GatedAct,
    Int8Tiling,
    _normed_launch,
)
from vexel_core.quant.measure import random_raw

NAN = float("nan")
EPS = 1e-5
ROWS = 37  # on the GPU; EMULATED_PAIRS (9) rows or pairs in the emulation
# INT8_TYPES, and Q4_0 repacked (BlockWeight's layout on CUDA)
KINDS = [*(t.name for t in sorted(INT8_TYPES, key=int)), "Q4_0-packed"]
TWO_WARPS = Int8Tiling(warps=2, stages=2, per_lane=2, ctas=2)


def weight(kind: str, rng: np.random.Generator, path: str, rows: int, short: bool) -> Matrix:
    """Random blocks of *kind*: the default columns (several 1,024-element chunks, the last
    partial), or *short* rows of fewer 32-value blocks than a four-warp CTA has threads."""
    if kind == "Q4_0-packed":
        return packed_matrix(rng, path=path, rows=rows)
    ggml_type = T[kind]
    cols = (32 * 37 if FORMATS[ggml_type].block_elems == 32 else 256 * 3) if short else None
    return matrix(ggml_type, rng, skip=1, path=path, cols=cols, rows=rows)


def stream(rng: np.random.Generator, m: Matrix, dtype: mx.Dtype) -> tuple[mx.array, ...]:
    """x, delta and the norm's weight: a stream small enough that eps is ~8% of its mean square
    (so that eps's place in the formula shows), a delta half its size, and a weight around 1
    (with negative entries, which Gemma's folded weights have) scaled as `gated_x` scales x
    (random blocks are far larger than a model's weights)."""
    cols = m.values.shape[1]
    x = rng.normal(size=(1, cols)) * 0.01
    delta = rng.normal(size=(1, cols)) * 0.005
    w = rng.normal(1.0, 0.5, size=cols) * 1.5 / (np.sqrt(cols) * np.sqrt(np.mean(m.values**2)))
    return tuple(mx.array(a.astype(np.float32)).astype(dtype) for a in (x, delta, w))


def as_dtype(a: np.ndarray, dtype: mx.Dtype) -> np.ndarray:
    """float32 values rounded to *dtype* (to nearest, ties to even) and back."""
    return np.array(mx.array(a.astype(np.float32)).astype(dtype).astype(mx.float32))


def normed_reference(x: mx.array, delta: mx.array, w: mx.array, eps: float,
                     threads: int) -> tuple[np.ndarray, np.ndarray]:
    """(residual, normed) as a CTA of *threads* threads makes them, bit for bit, in float32:
    r = T(x + delta); thread t sums r^2 over its blocks t, t + threads, ... in turn (each
    product and sum rounded: no fma), the warp's xor tree adds lane pairs (every lane then
    holds the same sum), the warps' sums are added in turn; inv = rsqrt(sum / K + eps)
    correctly rounded (through float64: double rounding misses one value in ~2^29); normed =
    T(w * T(r * inv))."""
    dtype = x.dtype
    xf, df = (np.array(a.astype(mx.float32))[0] for a in (x, delta))
    r = as_dtype(xf + df, dtype)  # float32 addition, rounded once, then to T
    blocks = r.reshape(-1, 32)
    ss = np.zeros(threads, np.float32)
    for start in range(0, blocks.shape[0], threads):
        chunk = blocks[start : start + threads]
        for k in range(32):
            ss[: chunk.shape[0]] += chunk[:, k] * chunk[:, k]
    lanes = ss.reshape(-1, 32)
    for o in (16, 8, 4, 2, 1):
        lanes = lanes + lanes[:, np.arange(32) ^ o]
    total = np.float32(0)
    for part in lanes[:, 0]:
        total = np.float32(total + part)
    mean = np.float32(total / np.float32(r.size))
    inv = np.float32(1.0 / np.sqrt(np.float64(np.float32(mean + np.float32(eps)))))
    scaled = as_dtype(r * inv, dtype)
    wf = np.array(w.astype(dtype).astype(mx.float32))
    return r, as_dtype(wf * scaled, dtype)


def emulated_normed(binary: Path, x: mx.array, delta: mx.array, w: mx.array, m: Matrix,
                    tiling: Int8Tiling, act: str | None) -> tuple[mx.array, mx.array]:
    """(residual, y) from the kernel in the emulation (tests/kernel_emulation/run_kernels.cpp,
    XPRE 3), float32 or bfloat16."""
    outs = m.rows // 2 if act else m.rows
    cols = x.shape[1]
    args = ["gemv_int8", m.kernel_type, tiling.warps, tiling.stages, tiling.per_lane,
            tiling.grid(outs), m.rows, m.buffer.shape[1], m.skip, int(x.dtype == mx.bfloat16),
            0, GATED_ACTS[act] if act else 0, 0, 3]
    data = (m.buffer.tobytes() + b"".join(np.array(a.astype(x.dtype).view(mx.uint8)).tobytes()
                                          for a in (x, delta, w))
            + np.float32(EPS).tobytes())
    out = mx.array(np.frombuffer(emulation.run(binary, args, data), np.uint8)).view(x.dtype)
    return out[outs:].reshape(1, cols), out[:outs].reshape(1, outs)


def normed_product(path: str, x: mx.array, delta: mx.array, w: mx.array, m: Matrix,
                   tiling: Int8Tiling, act: GatedAct | None,
                   request: pytest.FixtureRequest) -> tuple[mx.array, mx.array]:
    if path == "gguf_kernel":
        return library("cuda").gemv_normed(x, delta, w, EPS, m.raw, m.ggml_type, tiling=tiling,
                                           act=act, init_value=NAN, packed=m.packed)
    return emulated_normed(request.getfixturevalue("emulator"), x, delta, w, m, tiling, act)


PATHS = [pytest.param("gguf_kernel", marks=pytest.mark.gpu), "emulated_cuda"]
# (dtype, act) pairs: the emulation builds float32 plain and bfloat16 plain and SiLU
MODES: list[tuple[mx.Dtype, GatedAct | None]] = [
    (mx.bfloat16, None), (mx.float32, None), (mx.bfloat16, "silu"), (mx.float16, None),
    (mx.bfloat16, "gelu_tanh"), (mx.float16, "silu")]


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("short", [False, True], ids=["chunks", "short"])
@pytest.mark.parametrize("tiling", [None, TWO_WARPS], ids=["default", "2warps-2ctas"])
@pytest.mark.parametrize("mode", MODES, ids=lambda m: f"{m[0]}-{m[1] or 'plain'}".replace(
    "mlx.core.", ""))
@pytest.mark.parametrize("kind", KINDS)
def test_normed_product_equals_reference(
    path: str, kind: str, mode: tuple[mx.Dtype, GatedAct | None], tiling: Int8Tiling | None,
    short: bool, rng: np.random.Generator, request: pytest.FixtureRequest,
) -> None:
    dtype, act = mode
    if path == "gguf_kernel" and gpu_backend() != "cuda":
        pytest.skip("gemv_int8 is a CUDA kernel")
    if path == "emulated_cuda" and (dtype == mx.float16 or (act and dtype != mx.bfloat16)
                                    or act == "gelu_tanh"):
        pytest.skip("the emulation builds float32 plain and bfloat16 plain and SiLU alone")
    if kind == "Q4_0-packed" and short:
        pytest.skip("packed rows are whole 1,024-element super-blocks")
    if path == "gguf_kernel" and tiling and dtype != mx.bfloat16:
        pytest.skip("the other tiling runs bf16 alone on the GPU (each variant compiles)")
    emulated = path == "emulated_cuda"
    outs = EMULATED_PAIRS if emulated else ROWS
    m = weight(kind, rng, path, 2 * outs if act else outs, short)
    cols = m.values.shape[1]
    x, delta, w = stream(rng, m, dtype)
    launch = _normed_launch("cuda", m.ggml_type, tuple(m.raw.shape), mx.uint8, (1, cols), dtype,
                            (1, cols), dtype, (cols,), tiling, act, m.packed)
    threads = launch.threadgroup[0]
    template = dict(launch.template)
    chosen = tiling or Int8Tiling(warps=template["WARPS"], stages=template["STAGES"],
                                  per_lane=template["PER_LANE"], ctas=launch.grid[0] // threads)
    residual, y = normed_product(path, x, delta, w, m, chosen, act, request)
    r, normed = normed_reference(x, delta, w, EPS, threads)

    assert residual.dtype == y.dtype == dtype and residual.shape == (1, cols)
    np.testing.assert_array_equal(np.array(residual.astype(mx.float32))[0], r)
    got = np.array(y.astype(mx.float32))[0]
    assert got.shape == (m.rows // 2 if act else m.rows,) and np.isfinite(got).all()
    xr = int8_activations(normed[None, :])[0]
    if act is None:
        exact = m.values @ xr
        bound = float32_bound(xr[None, :], m.values)[0] + UNIT_ROUNDOFF[dtype] * np.abs(exact)
        assert (np.abs(got - exact) <= bound).all()
    else:
        half = m.rows // 2
        wg, wu = m.values[:half], m.values[half:]
        g, u = wg @ xr, wu @ xr
        bound = glu_bound(g, u, float32_bound(xr, wg), float32_bound(xr, wu), act, dtype)
        assert (np.abs(got - GLU[act](g) * u) <= bound).all()


@pytest.mark.gpu
@pytest.mark.parametrize("kind", KINDS)
def test_normed_product_against_the_two_launches(kind: str, rng: np.random.Generator) -> None:
    # What the mode replaces on the GPU: add_rms_norm's kernel, then gemv_int8 on its output.
    # The residuals are equal bit for bit; the norms are summed in other orders (add_rms_norm
    # with rsqrtf, ~2 ulps), so a normed value may round to the other neighbour of T where it
    # lies within ~2^-21 of a tie, and the int8 rounding after it may move: one step of the
    # element, or, where the element is its block's largest, d by 2^-8 and with it every q of
    # the block by one. So x's int8 values agree within two steps (2 d) an element, and the
    # products within sum |w| 2 d, plus each output's rounding.
    if gpu_backend() != "cuda":
        pytest.skip("gemv_int8 is a CUDA kernel")
    from vexel_core.model import kernels as model_kernels

    m = weight(kind, rng, "gguf_kernel", ROWS, False)
    x, delta, w = stream(rng, m, mx.bfloat16)
    lib = library("cuda")
    residual, fused = lib.gemv_normed(x, delta, w, EPS, m.raw, m.ggml_type, packed=m.packed)
    h, n = model_kernels.add_rms_norm(x, delta, w, EPS, backend="cuda")
    unfused = lib.gemv(n, m.raw, m.ggml_type, packed=m.packed)
    np.testing.assert_array_equal(np.array(residual.view(mx.uint16)), np.array(h.view(mx.uint16)))
    nf = np.array(n.astype(mx.float32))
    d = np.abs(nf.reshape(-1, 32)).max(axis=1, keepdims=True) / 127
    step = np.abs(m.values) @ np.broadcast_to(d, (d.shape[0], 32)).reshape(-1)
    a, b = np.array(fused.astype(mx.float32))[0], np.array(unfused.astype(mx.float32))[0]
    assert (np.abs(a - b) <= 2 * step + 2 * 2.0**-8 * np.abs(b)).all()
    print(f"{kind}: {np.mean(a == b):.3f} of outputs equal")


def test_blocks_take_the_norm_into_their_products(
    rng: np.random.Generator, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The model's use of the mode, off the GPU: with CUDA's kernels pretended (gemv_normed and
    # gemv recorded), a pre-norm block's one-row decode sends its fused qkv projection and its
    # gate/up product (SiLU) through gemv_normed with the stream's x and delta; the first
    # block's stream (no delta yet), more rows, a bias, or an activation without a kernel
    # name take the add, the norm and the product separately.
    import vexel_core.quant.kernels as kernels
    import vexel_core.quant.weights as weights
    from vexel_core.model.layers import (
        Attention,
        AttentionOptions,
        GatedMLP,
        RMSNorm,
    )
    from vexel_core.model.linear import Linear
    from vexel_core.quant.kernels.library import KernelLibrary
    from vexel_core.quant.selection import QuantPath

    calls: list[tuple[str, int, object]] = []

    def gemv(self: KernelLibrary, x: mx.array, raw: mx.array, ggml_type: T,
             **kw: object) -> mx.array:
        calls.append(("gemv", x.shape[0], kw.get("act")))
        return mx.zeros((x.shape[0], raw.shape[0] // (2 if kw.get("act") else 1)), x.dtype)

    def gemv_normed(self: KernelLibrary, x: mx.array, delta: mx.array, nw: mx.array,
                    eps: float, raw: mx.array, ggml_type: T,
                    **kw: object) -> tuple[mx.array, mx.array]:
        calls.append(("gemv_normed", x.shape[0], kw.get("act")))
        rows = raw.shape[0] // (2 if kw.get("act") else 1)
        return x + delta, mx.zeros((1, rows), x.dtype)

    monkeypatch.setattr(kernels, "gpu_backend", lambda: "cuda")
    monkeypatch.setattr(weights, "select_for", lambda *a: QuantPath.GGUF_KERNEL)
    monkeypatch.setattr(KernelLibrary, "gemv", gemv)
    monkeypatch.setattr(KernelLibrary, "gemv_normed", gemv_normed)

    hidden = 256

    def q4(rows: int) -> Linear:
        return Linear(FORMATS[T.Q4_0].load(random_raw(T.Q4_0, rows, hidden, rng), (rows, hidden)))

    norm = RMSNorm(mx.ones((hidden,)), EPS)
    opts = AttentionOptions(n_heads=2, n_kv_heads=1, head_dim=32)
    attn = Attention(0, opts, None, q4(hidden), qkv=q4(4 * 32))
    x = mx.ones((1, hidden), mx.bfloat16)
    for delta, rows, expected in [(x, 1, "gemv_normed"), (None, 1, "gemv"), (x, 3, "gemv")]:
        calls.clear()
        xs = mx.ones((rows, hidden), mx.bfloat16)
        h, (q, k, v) = attn.norm_and_project(norm, xs, None if delta is None else xs,
                                             mx.zeros((rows,), mx.int32))
        assert h.shape == (rows, hidden) and q.shape == (rows, 2, 32) and v.shape == (rows, 1, 32)
        assert calls == [(expected, rows, None)]
    for act, name in ((nn.silu, "silu"), (nn.relu, None)):
        calls.clear()
        mlp = GatedMLP(q4(hidden), gate_up=q4(2 * hidden), act=act)
        h, out = mlp.norm_and_call(norm, x, x)
        assert out.shape == (1, hidden)
        first = ("gemv_normed", 1, name) if name else ("gemv", 1, None)
        assert calls[0] == first and calls[-1] == ("gemv", 1, None)
    biased = Linear(q4(2 * hidden).weight, bias=mx.zeros((2 * hidden,)))
    calls.clear()
    h, out = GatedMLP(q4(hidden), gate_up=biased).norm_and_call(norm, x, x)
    assert calls[0] == ("gemv", 1, None)


@pytest.mark.gpu
def test_decode_with_the_norm_in_the_products(host, tmp_path: Path,  # type: ignore[no-untyped-def]
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    # A Q4_0 Llama-shaped model (random weights, `vexel bench`'s "small" preset: 512 hidden,
    # four layers) decoding greedily with log-probabilities on CUDA, the adds and norms before
    # the qkv and gate/up products inside gemv_int8 (the default) against add_rms_norm's own
    # launches (what the mode replaced): the same tokens, or a parting at a near-tie of bf16
    # logits (`assert_same_runs`), since the two sum the norm in other orders (see
    # test_normed_product_against_the_two_launches). The mode must have run.
    if gpu_backend() != "cuda":
        pytest.skip("gemv_int8 is a CUDA kernel")
    from tests.helpers import assert_same_runs, engine_for, run_traced
    from vexel_core.bench.random_model import write_random_model
    from vexel_core.engine import GenerationRequest
    from vexel_core.model.layers import Norm, RMSNorm
    from vexel_core.quant.kernels.library import KernelLibrary
    from vexel_core.sampling.params import SamplingParams

    path = write_random_model(tmp_path / "small-q4_0.gguf", "small", "q4_0", seed=3)
    prompts = np.random.default_rng(4).integers(300, 4000, size=(3, 12))
    requests = [GenerationRequest(f"r{i}", [1, *map(int, p)],
                                  SamplingParams(temperature=0.0, logprobs=5), max_tokens=16,
                                  ignore_eos=True) for i, p in enumerate(prompts)]
    fused_calls: list[int] = []
    real = KernelLibrary.gemv_normed

    def counted(self: KernelLibrary, *args: object, **kw: object) -> tuple[mx.array, mx.array]:
        fused_calls.append(1)
        return real(self, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(KernelLibrary, "gemv_normed", counted)
    fused = run_traced(engine_for(path, host, max_batch_size=1), requests)
    assert fused_calls, "the normed mode never ran"
    monkeypatch.setattr(RMSNorm, "add_and_project", Norm.add_and_project)
    fused_calls.clear()
    separate = run_traced(engine_for(path, host, max_batch_size=1), requests)
    assert not fused_calls
    assert_same_runs(fused, separate, mx.bfloat16)
