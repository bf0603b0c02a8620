"""Host time of one quantized product's dispatch, any machine (the CPU too).

    python benchmarks/dispatch_cost.py

A decoding token launches four quantized products per layer (128 for Llama-3-8B), each
through ``Linear -> BlockWeight.matmul -> select_for -> gguf_matmul -> KernelLibrary.gemv``
and then MLX's custom-kernel call. On the GPU one request is host-bound (notes/engine-gpu.md,
session 7), so the Python around each launch counts. Here the kernel call is a stub that
returns a ready array and CUDA is pretended, so every figure is Python alone; "stub call
alone" is the floor.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable
from typing import Any

import mlx.core as mx
import numpy as np
from gguf import GGMLQuantizationType

from vexel_core.model.linear import Linear
from vexel_core.quant.formats import ALL_FORMATS
from vexel_core.quant.measure import random_raw

kernels = importlib.import_module("vexel_core.quant.kernels")
library = importlib.import_module("vexel_core.quant.kernels.library")
selection = importlib.import_module("vexel_core.quant.selection")


class StubKernel:
    """Stands for `mx.fast.cuda_kernel`'s kernel: the output, already made."""

    def __init__(self) -> None:
        self.outputs: dict[tuple[int, ...], mx.array] = {}

    def __call__(self, *, output_shapes: list[tuple[int, ...]],
                 output_dtypes: list[mx.Dtype], **_: Any) -> list[mx.array]:
        shape = tuple(output_shapes[0])
        if shape not in self.outputs:
            self.outputs[shape] = mx.zeros(shape, output_dtypes[0])
        return [self.outputs[shape]]


def per_call_us(fn: Callable[[], object], n: int = 20000) -> float:
    for _ in range(n // 10):
        fn()
    best = float("inf")
    for _ in range(7):
        t = time.perf_counter()
        for _ in range(n):
            fn()
        best = min(best, (time.perf_counter() - t) / n * 1e6)
    return best


def main() -> None:
    for module in (kernels, library):
        module.gpu_backend = lambda: "cuda"
    selection.device_kind = lambda: "cuda"
    stub = StubKernel()
    library.KernelLibrary._kernel = lambda self, op: stub
    t = GGMLQuantizationType.Q4_0
    fmt = next(f for f in ALL_FORMATS if f.ggml_type == t)
    weight = fmt.load(random_raw(t, 64, 4096, np.random.default_rng(0)), (64, 4096))
    linear, x = Linear(weight), mx.zeros((1, 4096), mx.bfloat16)
    lib = library.library("cuda")
    cases: dict[str, Callable[[], object]] = {
        "stub call alone": lambda: stub(output_shapes=[(1, 64)], output_dtypes=[mx.bfloat16]),
        "Linear(x)": lambda: linear(x),
        "BlockWeight.matmul": lambda: weight.matmul(x),
        "select_for": lambda: selection.select_for(t, x),
        "gguf_matmul": lambda: kernels.gguf_matmul(x, weight.raw, t, packed=weight.packed),
        "KernelLibrary.gemv": lambda: lib.gemv(x, weight.raw, t, packed=weight.packed),
    }
    for name, fn in cases.items():
        print(f"{name:20s} {per_call_us(fn):6.2f} us")


if __name__ == "__main__":
    main()
