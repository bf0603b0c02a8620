"""The residual add + RMS norm kernel (vexel_core/model/kernels) against plain MLX: on the GPU
in every activation dtype, and its CUDA and Metal sources on the CPU under the emulations of
tests/kernel_emulation (float32, against float64 numpy; Metal's as the wrapper hands it to
``mx.fast.metal_kernel``, tests/emulation.py)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import mlx.core as mx
import numpy as np
import pytest

from tests import emulation
from vexel_core.gpu import kernel_backend
from vexel_core.model import kernels
from vexel_core.model.layers import RMSNorm

# (rows, hidden): one token, a few, a prefill chunk; Llama-3-8B's width and others whose
# 16-byte words (8 bfloat16, 4 float32) do not fill whole warps or CTAs
SHAPES = [(1, 4096), (3, 80), (8, 2560), (33, 264), (64, 1000), (2, 16384)]


@contextmanager
def metal_launches(recorder: emulation.MetalRecorder, threads: int | None) -> Iterator[None]:
    """`kernels.add_rms_norm` with backend "metal" calling *recorder*; with *threads* (one
    warp: several words a thread) instead of `launch_shape`'s, which the wrapper would pick."""
    with pytest.MonkeyPatch.context() as patch:
        if threads is not None:
            patch.setattr(kernels, "launch_shape", lambda hidden, dtype: (
                threads, 1 << (-(-hidden * dtype.size // 16 // threads) - 1).bit_length()))
        with emulation.metal_kernels_on_cpu(recorder, kernels._kernel):
            yield


@pytest.fixture(scope="session")
def metal_emulator(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tests/kernel_emulation/run_metal.cpp with every launch of the test below, recorded
    from the wrapper's calls."""
    recorder = emulation.MetalRecorder()
    for rows, hidden in SHAPES:
        for threads in THREADS:
            with metal_launches(recorder, threads):
                x = mx.zeros((rows, hidden))
                kernels.add_rms_norm(x, x, mx.zeros((hidden,)), 1e-5, backend="metal")
    return emulation.build_metal(tmp_path_factory.mktemp("metal_norm"), recorder.kernels)


THREADS = [32, None]


@pytest.mark.parametrize(("rows", "hidden"), SHAPES)
@pytest.mark.parametrize("threads", THREADS)
@pytest.mark.parametrize("path", ["emulated_cuda", "emulated_metal"])
def test_add_rms_norm_emulated_on_the_cpu(rows, hidden, threads, path, tmp_path: Path, rng,  # type: ignore[no-untyped-def]
                                          request) -> None:
    """cuda/add_rms_norm.cu and metal/add_rms_norm.metal in float32, with the launch
    `launch_shape` picks and with one warp (several words a thread). Tolerance 2e-6 relative:
    float32 sums of squares in another order than numpy's float64 move the normaliser by a
    few float32 ulps."""
    x, delta = (rng.standard_normal((rows, hidden)).astype(np.float32) * 3 for _ in range(2))
    w = rng.standard_normal(hidden).astype(np.float32)
    eps = 1e-5
    if path == "emulated_metal":
        recorder = emulation.MetalRecorder(request.getfixturevalue("metal_emulator"))
        with metal_launches(recorder, threads):
            got = kernels.add_rms_norm(*(mx.array(a) for a in (x, delta, w)), eps,
                                       backend="metal", init_value=float("nan"))
        residual, normed = (np.array(a) for a in got)
    else:
        binary = emulation.build(tmp_path, "run_add_rms_norm.cpp",
                                 [Path(kernels.__file__).parent / "cuda"])
        if threads is None:
            threads, per = kernels.launch_shape(hidden, mx.float32)
        else:
            per = 1 << (-(-hidden // 4 // threads) - 1).bit_length()
        out = np.frombuffer(emulation.run(binary, [rows, hidden, threads, per, eps],
                                          x.tobytes() + delta.tobytes() + w.tobytes()),
                            np.float32)
        residual, normed = out.reshape(2, rows, hidden)
    want = x + delta  # float32 addition, as the kernel rounds it
    np.testing.assert_array_equal(residual, want)
    s = want.astype(np.float64)
    ref = s / np.sqrt((s * s).mean(axis=1, keepdims=True) + eps) * w
    np.testing.assert_allclose(normed, ref, rtol=2e-6, atol=1e-6)


def test_metal_add_rms_norm_keeps_address_spaces_apart(tmp_path: Path) -> None:
    # as in test_quant_kernels: a pointer moved out of threadgroup or device memory would
    # compile on the CPU but not for Metal
    recorder = emulation.MetalRecorder()
    with metal_launches(recorder, None):
        x = mx.zeros((1, 4096), dtype=mx.bfloat16)
        kernels.add_rms_norm(x, x, mx.zeros((4096,)), 1e-5, backend="metal")
    errors = emulation.metal_address_space_errors(tmp_path, recorder.kernels)
    assert errors == {"threadgroup": "", "device": ""}, "\n".join(errors.values())


ULP = {mx.float32: 2.0**-23, mx.float16: 2.0**-10, mx.bfloat16: 2.0**-7}
ULPS = {mx.float32: 8, mx.float16: 1, mx.bfloat16: 1}


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [mx.float32, mx.float16, mx.bfloat16], ids=str)
@pytest.mark.parametrize(("rows", "hidden"), SHAPES)
def test_add_rms_norm_matches_mlx_on_the_gpu(rows, hidden, dtype, rng) -> None:  # type: ignore[no-untyped-def]
    """Fresh random inputs, outputs poisoned with NaN before the run. The sum is rounded
    once, as MLX's addition: equal. The norm is rounded as MLX's rms_norm rounds, but its
    float32 sum of squares runs in another order: one ulp of a 16-bit dtype apart at most; in
    float32 the normaliser's few ulps carry through two more roundings (8 ulps allowed)."""
    backend = kernel_backend()
    assert backend is not None
    x, delta = (mx.array(rng.standard_normal((rows, hidden)) * 3).astype(dtype)
                for _ in range(2))
    w = mx.array(rng.standard_normal(hidden)).astype(dtype)
    residual, normed = kernels.add_rms_norm(x, delta, w, 1e-5, backend=backend,
                                            init_value=float("nan"))
    want = x + delta
    assert mx.array_equal(residual, want).item()
    ref = np.array(mx.fast.rms_norm(want, w, 1e-5).astype(mx.float32))
    got = np.array(normed.astype(mx.float32))
    assert not np.isnan(got).any()
    np.testing.assert_allclose(got, ref, rtol=ULPS[dtype] * ULP[dtype], atol=ULP[dtype] * 1e-3)


@pytest.mark.parametrize("hidden", [96, 257])
def test_rms_norm_add_is_the_sum_and_its_norm(hidden, rng) -> None:  # type: ignore[no-untyped-def]
    """`RMSNorm.add` on whatever device runs the suite (the kernel on a GPU where rows are
    whole words, else two operations), against the two operations; with no delta, the norm
    alone."""
    x, delta = (mx.array(rng.standard_normal((5, hidden)).astype(np.float32))
                for _ in range(2))
    norm = RMSNorm(mx.array(rng.standard_normal(hidden).astype(np.float32)), 1e-6)
    h, n = norm.add(x, delta)
    np.testing.assert_allclose(np.array(h), np.array(x + delta), rtol=1e-6)
    np.testing.assert_allclose(np.array(n), np.array(norm(x + delta)), rtol=1e-5, atol=1e-6)
    h, n = norm.add(x, None)
    assert h is x
    np.testing.assert_array_equal(np.array(n), np.array(norm(x)))


def test_add_rms_norm_refuses_mismatched_inputs() -> None:
    x = mx.zeros((2, 8))
    with pytest.raises(ValueError, match="x and delta must be"):
        kernels.add_rms_norm(x, mx.zeros((2, 9)), mx.zeros((8,)), 1e-5, backend="cuda")
    with pytest.raises(ValueError, match=r"weight must be \[8\]"):
        kernels.add_rms_norm(x, x, mx.zeros((9,)), 1e-5, backend="cuda")
    odd = mx.zeros((2, 9))
    with pytest.raises(ValueError, match="not whole 16-byte words"):
        kernels.add_rms_norm(odd, odd, mx.zeros((9,)), 1e-5, backend="cuda")
