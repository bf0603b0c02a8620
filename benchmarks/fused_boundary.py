"""The q/k/v product and the attention in one launch against two (GPU machine): is the phase
boundary inside one launch cheaper than the launch it saves? An experiment with a stand-in for
the attention, before the engine's kernels are fused (notes/gpu-kernels.md, "Next").

    python benchmarks/fused_boundary.py [--layers 64] [--prologue 6] [--spin-ns 5000]

A layer here is one Llama-3-8B request's q/k/v product (6144x4096, packed Q4_0, one bf16 row:
``gemv_int8``, the engine's kernel) and a stand-in for its paged decode (8 CTAs, one a KV
head: ``--prologue`` dependent loads through a 256 MB table, as the decode's prologue waits
for its parameters and table entries; its head's rows of the product; ``--spin-ns`` of
stand-in work; its q rows written as the next layer's x, so that the layers form one chain).
Arms:

* ``separate``: the two as launches of their own, the product at the engine's tiling and at
  the fused arm's;
* ``fused``: one launch (benchmarks/fused_boundary.cu), the product's CTAs first and
  counting themselves done, the stand-in's CTAs last, waiting for that count after their
  prologue (so the prologue overlaps the product);
* ``fused, one CTA an SM``: the same with shared memory padded so that one CTA fits an SM,
  as the attention's 130 registers at 8 warps would allow a fused kernel.

Weight copies cycle through more than L2 holds. Each arm evaluates ``--layers`` layers as one
graph (MLX launches them back to back) and prints, by CUPTI, the span a layer (first start to
last end over the run, divided by the layers) and each kernel's median duration; the arms
alternate, twice. First a check: the fused launch's product equals the separate one's bit for
bit (the same arithmetic), and its next x is the product's q rows.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from collections.abc import Callable
from pathlib import Path

import mlx.core as mx
import numpy as np
from gguf import GGMLQuantizationType

sys.path.insert(0, str(Path(__file__).parent))
from gpu_timeline import cupti_spans  # noqa: E402
from kernels import NOT_IN_L2, fresh_copy, random_blocks  # noqa: E402

from vexel_core.gpu import TOKEN_SHAPE, cuda_header, on_cuda  # noqa: E402
from vexel_core.quant.kernels import library  # noqa: E402
from vexel_core.quant.kernels.library import Int8Tiling, _int8_launch, kernel_source  # noqa: E402
from vexel_core.quant.kernels.packed import pack_q4_0  # noqa: E402

Q4_0 = GGMLQuantizationType.Q4_0
ROWS, K = 6144, 4096  # the fused q/k/v product; x's length
A_CTAS = 8  # fused_boundary.cuh's
CHAIN = 64 << 20  # int32 entries of the prologue's table: 256 MB, past L2
ENGINE = Int8Tiling(warps=4, stages=2, per_lane=4, ctas=924)  # INT8_TILINGS at 4,096 columns
FUSED = Int8Tiling(warps=8, stages=2, per_lane=4, ctas=528)  # 8 warps: the decode's CTA
ONE_AN_SM = Int8Tiling(warps=8, stages=2, per_lane=4, ctas=132 - A_CTAS)
ONE_AN_SM_SHARED = 120_000  # bytes: over half an SM's 228 KB

HERE = Path(__file__).parent
_HEADER = cuda_header([HERE / "fused_boundary.cuh"])
STAND_IN = mx.fast.cuda_kernel(
    "vx_stand_in", ["y", "chain"], ["xn"],
    "vx_bench::stand_in<T, PROLOGUE, SPIN_NS>(int(blockIdx.x), chain, y, xn, nullptr, 0);",
    _HEADER)

Layer = Callable[[mx.array, mx.array], mx.array]  # (x, weight) -> the next x


Fused = Callable[[mx.array, mx.array], tuple[mx.array, mx.array]]  # (x, w) -> (y, next x)


def fused_launch(chain: mx.array, count: mx.array, prologue: int, spin_ns: int,
                 tiling: Int8Tiling, shared: int | None = None) -> Fused:
    """The fused launch (benchmarks/fused_boundary.cu): the product at *tiling*, then the
    stand-in; *shared* bytes of dynamic shared memory (default: the product's)."""
    launch = _int8_launch("cuda", Q4_0, (ROWS, K // 1024 * 576), mx.uint8, (1, K),
                          mx.bfloat16, tiling, packed=True)
    header = kernel_source("cuda", "gemv_int8")[0] + "\n" + _HEADER
    kernel = mx.fast.cuda_kernel("vx_fused", ["w", "x", "chain", "count"], ["y", "xn"],
                                 (HERE / "fused_boundary.cu").read_text(), header,
                                 shared_memory=shared or launch.shared)
    threads = launch.threadgroup[0]
    ctas = launch.grid[0] // threads + A_CTAS

    def run(x: mx.array, w: mx.array) -> tuple[mx.array, mx.array]:
        y, xn = kernel(inputs=[w, x, chain, count],
                       template=[*launch.template, ("PROLOGUE", prologue), ("SPIN_NS", spin_ns)],
                       grid=(ctas * threads, 1, 1), threadgroup=(threads, 1, 1),
                       output_shapes=[(1, ROWS), (1, K)], output_dtypes=[mx.bfloat16, mx.bfloat16])
        return y, xn
    return run


def layers(chain: mx.array, count: mx.array, prologue: int, spin_ns: int
           ) -> dict[str, Layer]:
    """Each arm's layer."""
    lib = library("cuda")
    stand_in_args = [("T", mx.bfloat16), ("PROLOGUE", prologue), ("SPIN_NS", spin_ns)]

    def separate(tiling: Int8Tiling) -> Layer:
        def layer(x: mx.array, w: mx.array) -> mx.array:
            y = lib.gemv(x, w, Q4_0, tiling=tiling, packed=True)
            (xn,) = STAND_IN(inputs=[y, chain], template=stand_in_args,
                             grid=(A_CTAS * 256, 1, 1), threadgroup=(256, 1, 1),
                             output_shapes=[(1, K)], output_dtypes=[mx.bfloat16])
            return xn
        return layer

    def fused(tiling: Int8Tiling, shared: int | None = None) -> Layer:
        run = fused_launch(chain, count, prologue, spin_ns, tiling, shared)
        return lambda x, w: run(x, w)[1]

    return {"separate, engine's tiling": separate(ENGINE),
            "separate, 8/2/4/528": separate(FUSED),
            "fused, 8/2/4/528": fused(FUSED),
            "fused, one CTA an SM": fused(ONE_AN_SM, ONE_AN_SM_SHARED)}


def check(chain: mx.array, count: mx.array, w: mx.array, x: mx.array) -> str:
    """The fused launch's product and next x against the separate product's."""
    y, xn = fused_launch(chain, count, 2, 0, FUSED)(x, w)
    ref = library("cuda").gemv(x, w, Q4_0, tiling=FUSED, packed=True)
    got, nxt, want = (np.array(a.astype(mx.float32)) for a in (y, xn, ref))
    return (f"product {'equal' if np.array_equal(got, want) else 'DIFFERENT'}, next x "
            f"{'the q rows' if np.array_equal(nxt[0], want[0, :K]) else 'WRONG'}, counts "
            f"left {np.array(count).tolist()}")


def time_arm(layer: Layer, x: mx.array, copies: list[mx.array], n: int) -> str:
    """*n* layers through the weight copies as one graph: the span a layer and each kernel's
    median duration, by CUPTI."""
    def run() -> None:
        h = x
        for i in range(n):
            h = layer(h, copies[i % len(copies)])
        mx.eval(h)

    run()
    spans = [s for s in cupti_spans(run) if "vx_" in s[2]]
    per_layer = (max(b for _, b, _, _ in spans) - min(a for a, _, _, _ in spans)) / n
    kinds: dict[str, list[float]] = {}
    for a, b, name, _ in spans:
        kind = next((k for k in ("vx_fused", "vx_stand_in", "vx_gemv") if k in name), name)
        kinds.setdefault(kind, []).append(b - a)
    cells = ", ".join(f"{k.removeprefix('vx_')} {statistics.median(d):.1f}"
                      for k, d in kinds.items())
    return f"{per_layer:6.1f} us a layer  (kernel medians: {cells})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--layers", type=int, default=64)
    ap.add_argument("--prologue", type=int, default=6, help="the stand-in's dependent loads")
    ap.add_argument("--spin-ns", type=int, default=5000, help="the stand-in's work after them")
    a = ap.parse_args()
    if not on_cuda():
        sys.exit("fused_boundary.py needs MLX's CUDA backend")
    one = pack_q4_0(random_blocks(Q4_0, ROWS, K))
    copies = [one] + [fresh_copy(one) for _ in range(math.ceil(NOT_IN_L2 / one.nbytes) - 1)]
    chain = mx.random.randint(0, CHAIN, (CHAIN,), dtype=mx.int32)
    count = mx.zeros(TOKEN_SHAPE, dtype=mx.uint32)  # not the small pool (gpu.py)
    x = (mx.random.normal((1, K)) * 0.1).astype(mx.bfloat16)
    mx.eval(copies, chain, count, x)
    print(f"check: {check(chain, count, one, x)}", flush=True)
    arms = layers(chain, count, a.prologue, a.spin_ns)
    print(f"{len(copies)} weight copies of {one.nbytes / 1e6:.1f} MB; stand-in: {a.prologue} "
          f"dependent loads, {a.spin_ns} ns; {a.layers} layers a run", flush=True)
    for _ in range(2):
        for name, layer in arms.items():
            print(f"  {name:28s} {time_arm(layer, x, copies, a.layers)}", flush=True)


if __name__ == "__main__":
    main()
