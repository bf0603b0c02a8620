"""How long the first launch of each custom kernel a Q4_0 Llama-3-8B step uses takes (NVRTC
compiling it, on CUDA), against a trivial kernel with and without our headers.

    python benchmarks/compile_cost.py

`vexel serve`'s warm-up exists to pay these before the first request (notes/engine-gpu.md,
session 26: 37-39 s of its 38-54 s went to the round of one request). Each line is one
kernel's first evaluation and, beside it, its second: the difference is the compile. MLX's
own kernels are warmed first, so they do not land on ours. Values in the arrays are random
bytes: the kernels' speed and results are not what is measured.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import mlx.core as mx
from gguf import GGMLQuantizationType as Q

from vexel_core import gpu
from vexel_core.attention import kernels as attention
from vexel_core.quant.kernels import (
    gguf_add_norm,
    gguf_dequantize,
    gguf_feed_forward,
    gguf_gated,
    gguf_matmul,
)
from vexel_core.quant.kernels.library import add_norm_scratch, feed_forward_scratch, kernel_source


def first_and_second(make: Callable[[], object]) -> tuple[float, float]:
    """Milliseconds of the first and the second evaluation of ``make()``."""
    times = []
    for _ in range(2):
        t0 = time.perf_counter()
        mx.eval(make())
        times.append(1e3 * (time.perf_counter() - t0))
    return times[0], times[1]


def blocks(rows: int, cols: int) -> mx.array:
    """Random Q4_0 bytes in the packed layout's shape (18 bytes per 32 elements)."""
    return mx.random.randint(0, 256, (rows, cols // 32 * 18)).astype(mx.uint8)


def trivial(name: str, header: str) -> Callable[[], object]:
    kernel = mx.fast.cuda_kernel(name, ["x"], ["y"], "y[threadIdx.x] = x[threadIdx.x];",
                                 header)
    x = mx.zeros((32,), mx.float32)
    return lambda: kernel(inputs=[x], grid=(32, 1, 1), threadgroup=(32, 1, 1),
                          output_shapes=[(32,)], output_dtypes=[mx.float32])[0]


def cases() -> list[tuple[str, Callable[[], object]]]:
    bf = mx.bfloat16
    quant_header, _ = kernel_source("cuda", "gemv")  # every quantized product's headers
    x4k, x14k = mx.ones((1, 4096), bf), mx.ones((1, 14336), bf)
    w_qkv, w_gu, w_down = blocks(6144, 4096), blocks(2 * 14336, 4096), blocks(4096, 14336)
    w_o = blocks(4096, 4096)
    norm_w, resid = mx.ones((4096,), bf), mx.ones((1, 4096), bf)
    scratch = add_norm_scratch()
    out = [
        ("trivial, MLX's header only", trivial("vx_cc_trivial", "")),
        ("trivial, the quantized products' headers", trivial("vx_cc_headers", quant_header)),
        ("gemv_int8 q/k/v 6144x4096", lambda: gguf_matmul(x4k, w_qkv, Q.Q4_0, packed=True)),
        ("gemv_int8 gated 2x14336x4096",
         lambda: gguf_gated(x4k, w_gu, Q.Q4_0, "silu", packed=True)),
        ("gemv_int8 + AddNorm 4096x4096", lambda: gguf_add_norm(
            x4k, w_o, Q.Q4_0, resid, norm_w, 1e-5, scratch, packed=True)),
        ("gemv_int8 + AddNorm 4096x14336", lambda: gguf_add_norm(
            x14k, w_down, Q.Q4_0, resid, norm_w, 1e-5, scratch, packed=True)),
        ("feed-forward part, 4096 -> 14336 -> 4096", lambda: gguf_feed_forward(
            x4k, w_gu, w_down, "silu", resid, norm_w, 1e-5, feed_forward_scratch(14336))),
        ("dequantize 4096x4096", lambda: gguf_dequantize(w_o, Q.Q4_0, bf, packed=True)),
        ("gemv 4 rows 4096x4096", lambda: gguf_matmul(mx.ones((4, 4096), bf), w_o, Q.Q4_0,
                                                      packed=True)),
    ]
    rep, D, bs = 4, 128, 16
    q = mx.zeros((1, 8 * rep, D), bf)
    pool = mx.zeros((64 * bs, 8, D), bf)
    tables = mx.zeros((1, 64), mx.int32)
    lens = mx.array([100], mx.int32)
    new, slots = mx.zeros((1, 8, D), bf), mx.zeros((1,), mx.int32)
    for w in attention.WARP_COUNTS:
        out.append((f"paged decode, writing, {w} warps", lambda w=w: attention.paged_decode_writing(
            q, new, new, slots, pool, pool, tables, lens, block_size=bs, scale=1.0, warps=w,
            splits=1)))
        out.append((f"paged decode, {w} warps", lambda w=w: attention.paged_decode(
            q, pool, pool, tables, lens, block_size=bs, scale=1.0, warps=w, splits=1)))
    out.append(("paged decode, two spans (CUDA: merged inside)", lambda: attention.paged_decode(
        q, pool, pool, tables, lens, block_size=bs, scale=1.0, warps=4, splits=2)))
    return out


def main() -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    if not gpu.on_cuda():
        raise SystemExit("compile_cost.py measures NVRTC: it needs MLX's CUDA backend")
    mx.eval(mx.random.normal((8, 8)) @ mx.ones((8, 8)))  # MLX's own kernels, first
    total = 0.0
    print(f"{'kernel':44} {'first ms':>9} {'second ms':>10}")
    for name, make in cases():
        first, second = first_and_second(make)
        total += first - second
        print(f"{name:44} {first:9.1f} {second:10.2f}", flush=True)
    print(f"{'compiling, in all':44} {total:9.1f}")


if __name__ == "__main__":
    main()
