"""What Vexel needs to know of MLX's GPU: whether MLX computes on CUDA (`on_cuda`), which
family of Vexel's own kernels runs there (`kernel_backend`), how weights get into its
memory (`device_resident`), how a CUDA kernel's header names its sources (`cuda_header`),
how a kernel is made from its source files (`source_kernel`), its constant inputs
(`float_constant`), MLX's CUDA graph settings
(`set_cuda_graph_defaults`), and the shape of the kernels' tiny outputs (`TOKEN_SHAPE`)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import mlx.core as mx

TOKEN_SHAPE = (8,)
"""The shape of the custom kernels' ordering tokens and unused outputs (only element 0 is
written): 16 bytes or more in any dtype of two bytes or more. MLX's CUDA allocator serves
arrays of 8 bytes or less from one small pool of managed memory (mlx/backend/cuda/
allocator.cpp; advised AccessedBy the GPU since MLX 0.29.3, ReadMostly before), shared with
the tiny arrays the host writes and reads every step (the sampled token): a page the host
touched is reached across the bus or faulted back, at every access (the slow paged decode
launches of session 19, gone in session 20 with this and `engine.runner.step_arrays`;
session 21's 4-byte eps; session 30's 8-byte counts, each atomic add ~1 us;
notes/gpu-kernels.md).
Read through `vexel_core.gpu.TOKEN_SHAPE` at call time (benchmarks/ab.py --tiny-tokens sets it
back to (1,))."""


def on_cuda() -> bool:
    """Whether MLX's default device is a CUDA GPU."""
    return mx.default_device() != mx.cpu and _cuda_available()


@cache
def _cuda_available() -> bool:
    try:
        return bool(mx.cuda.is_available())
    except AttributeError:  # builds without the CUDA module
        return False


def set_cuda_graph_defaults() -> None:
    """On CUDA, let MLX replay a whole decode step as one CUDA graph (up to 400 kernels and
    100 GB of inputs), where its defaults on an H100/H200 end a graph every 100 kernels or
    1 GB read: one Q4_0 Llama-3-8B token (~280 kernels, 4.5 GB of weights) was then about five
    graphs, each built, updated and launched by the host. One request's decoding is host-bound:
    in three alternated rounds on the H200 the median step fell from 3.07-3.15 ms (one slow
    episode: 4.22) to 2.76-2.84 (3.36), the time inside ``mx.async_eval`` from 1.75-1.80 to
    1.46-1.51 ms (session 18, call A; with graphs off: 3.17-3.53; call D, these settings as the
    default: 2.58-2.80). For 64-row steps (session 7) larger graphs moved time from submitting
    to waiting without changing the step. MLX reads the settings once, when it first computes
    on the GPU: this runs when Vexel is imported, and a value the user set is kept. Apple GPUs
    keep MLX's defaults (never measured there).

    And never let MLX fail a step over its cache of graph executables: it counts every miss
    for the life of the process and throws ("Cache thrashing is happening") once they pass
    twice its 400 entries (mlx/backend/cuda/lru_cache.h, MLX 0.32), from inside the submit
    of a step. A server meets a new graph shape with each new mix of prompts and decodes in a
    step; past 800 over its life, every such step would fail its requests. With the check off
    MLX evicts the least recently used executable and instantiates anew (milliseconds).
    (notes/mlx-cuda-host-cost.md)"""
    if _cuda_available():
        os.environ.setdefault("MLX_MAX_OPS_PER_BUFFER", "400")
        os.environ.setdefault("MLX_MAX_MB_PER_BUFFER", "100000")
        os.environ.setdefault("MLX_ENABLE_CACHE_THRASHING_CHECK", "0")


set_cuda_graph_defaults()


def kernel_backend() -> str | None:
    """"cuda" or "metal" when MLX's default device can run our kernels, else None.

    The Metal sources have never been compiled or run (no Apple machine here), so Apple GPUs
    use them only when ``VEXEL_METAL_KERNELS=1`` asks for it and take the reference paths
    otherwise.
    """
    if on_cuda():
        return "cuda"
    if mx.default_device() == mx.cpu:
        return None
    if mx.metal.is_available() and os.environ.get("VEXEL_METAL_KERNELS") == "1":
        return "metal"
    return None


def device_resident(a: mx.array) -> mx.array:
    """*a* in the GPU's own memory, for weights made from host data (the file's bytes).

    On CUDA, MLX keeps an array made on the host in managed memory, whose pages move to the
    GPU when a kernel first touches them. A dense product touches every page at once, but a
    gather from a token table touches new rows every step and kept faulting: the embedding
    rows of one 8192-token prefill step took 52 ms, and those of a 64-token decode step 50 us,
    on the H200 (notes/engine-gpu.md, session 5). An array computed by a GPU kernel lives in
    device memory, so the weight is copied by one (``a * 1`` is exact for every value).
    Elsewhere (CPU; Apple's unified memory) *a* is returned as it is. Either way evaluated.
    """
    if not on_cuda():
        mx.eval(a)
        return a
    # MLX's buffer cache is keyed by size alone: empty it, or the copy could land in a
    # host-made buffer freed earlier (the last weight of the same shape)
    mx.clear_cache()
    copy = a * mx.ones((), dtype=a.dtype)
    mx.eval(copy)  # while *a* is still referenced, so MLX cannot reuse its buffer for the copy
    return copy


@lru_cache(maxsize=64)
def float_constant(value: float) -> mx.array:
    """*value* as a float32 kernel input (a norm's eps: element 0 of ``[4]``), made and
    evaluated once: on CUDA a host-made array costs its first GPU reader a page fault
    (benchmarks/host_arrays.py), so a kernel's constants are not made again at every launch.
    16 bytes, not 4, for the reason of `TOKEN_SHAPE`: in MLX's small pool a 4-byte eps read by
    every CTA of a 512-CTA product cost each launch ~16 us (22.2 against 6.0 us;
    benchmarks/add_norm.py --variants, H200, session 21)."""
    constant = mx.array([value, 0.0, 0.0, 0.0], dtype=mx.float32)
    mx.eval(constant)
    return constant


def cuda_header(files: Sequence[Path]) -> str:
    """A `mx.fast.cuda_kernel` header that includes *files*, in order, by absolute path.

    MLX joins a kernel's header and body into one string on every call and hashes the
    string on every launch (to find the compiled module): with the quantized products' 27 KB
    of headers inlined, a launch cost 14.2 us of host time against 5.7 us with the same text
    included (benchmarks/custom_kernel_cost.py, H200; four products per layer). NVRTC reads
    the files when it first compiles the kernel. A path that a quoted include could not
    spell is inlined instead.
    """
    parts = []
    for f in files:
        path = str(Path(f).resolve())
        if any(c in path for c in '"\\\n'):
            parts.append(Path(f).read_text())
        else:
            parts.append(f'#include "{path}"')
    return "\n".join(parts) + "\n"


def source_kernel(backend: str, folder: Path, name: str, inputs: Sequence[str],
                  outputs: Sequence[str], *, headers: Sequence[str] = (),
                  ensure_row_contiguous: bool = True) -> Any:
    """MLX's custom kernel ``vx_<name>`` for *backend* from *folder*'s sources: on CUDA the
    body ``cuda/<name>.cu`` with ``cuda/<h>.cuh`` included for each of *headers* (default:
    *name*) in order (`cuda_header`), on Metal ``metal/<name>.metal``, a whole body. Kernels
    of the attention, cache and model layers are made this way; the quantized products
    (`vexel_core.quant.kernels`) build theirs from shared headers. MLX copies the body's
    text on every launch (`cuda_header` says what that costs), so a long kernel keeps its
    algorithm in a header and its body one call."""
    if backend == "cuda":
        return mx.fast.cuda_kernel(
            f"vx_{name}", inputs, outputs, (folder / "cuda" / f"{name}.cu").read_text(),
            cuda_header([folder / "cuda" / f"{h}.cuh" for h in headers or (name,)]),
            ensure_row_contiguous=ensure_row_contiguous)
    return mx.fast.metal_kernel(
        f"vx_{name}", inputs, outputs, (folder / "metal" / f"{name}.metal").read_text(),
        ensure_row_contiguous=ensure_row_contiguous)
