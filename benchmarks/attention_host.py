"""Host time of one layer's attention call in a one-request decode step, with the GPU kernels
replaced by stand-ins that return at once (any machine; the CPU here):

    python benchmarks/attention_host.py [--profile]

What it measures is the Python of the paged backend, the pool and the kernel wrappers
(`vexel_core.attention.kernels.paged_decode`, `vexel_core.kvcache.kernels.cache_write`) plus
MLX's cost of making the stand-ins' output arrays, not MLX's cost of a custom kernel, which
`benchmarks/node_cost.py` measures on the GPU machine (~0.6 us build and ~4.5 us submit a
kernel, session 9). Llama-3-8B heads, bfloat16, 300 tokens of context. ``--profile`` adds
cProfile's table by own time.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time
from typing import Any

import mlx.core as mx

from vexel_core.attention import backends, kernels
from vexel_core.attention.base import AttentionBatch
from vexel_core.kvcache import kernels as cache_kernels
from vexel_core.kvcache.pool import KVPool
from vexel_core.model.architecture import KVSpec

HQ, HKV, D, BS, CONTEXT = 32, 8, 128, 16, 300


class StandIn:
    """A custom kernel's call that returns zeros of the asked shapes at once."""

    def __call__(self, inputs: list[mx.array], output_shapes: list[tuple[int, ...]],
                 output_dtypes: list[mx.Dtype], **launch: Any) -> list[mx.array]:
        return [mx.zeros(s, dtype=d) for s, d in zip(output_shapes, output_dtypes, strict=True)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--calls", type=int, default=5000)
    ap.add_argument("--profile", action="store_true")
    a = ap.parse_args()
    kernels._kernel = lambda backend: StandIn()  # type: ignore[assignment]
    cache_kernels._kernel = lambda backend: StandIn()  # type: ignore[assignment]
    kernels.compile_variants = lambda *args: None  # type: ignore[assignment]
    backends.kernel_backend = lambda: "cuda"
    pool = KVPool(KVSpec(1, HKV, D, 4096, mx.bfloat16), 64, BS)
    pool.backend = "cuda"  # writes in place, through the stand-in
    backend = next(b for b in backends.BACKENDS if b.name == "paged")
    batch = AttentionBatch(
        pool=pool, backend=backend, positions=mx.array([CONTEXT - 1], dtype=mx.int32),
        slot_mapping=mx.array([CONTEXT - 1], dtype=mx.int32),
        block_tables=mx.array([list(range(32))], dtype=mx.int32), query_lens=[1],
        context_lens=[CONTEXT], logits_rows=None)
    q, k, v = (mx.zeros((1, h, D), dtype=mx.bfloat16) for h in (HQ, HKV, HKV))
    mx.eval(q, k, v)

    def layer() -> mx.array:
        return backend(q, k, v, layer=0, batch=batch, scale=D**-0.5)

    for _ in range(200):
        layer()
    start = time.perf_counter()
    for _ in range(a.calls):
        layer()
    print(f"{(time.perf_counter() - start) / a.calls * 1e6:.1f} us of host time a layer "
          f"(kernels stood in for)")
    if a.profile:
        profile = cProfile.Profile()
        profile.enable()
        for _ in range(a.calls // 2):
            layer()
        profile.disable()
        pstats.Stats(profile).sort_stats("tottime").print_stats(12)


if __name__ == "__main__":
    main()
