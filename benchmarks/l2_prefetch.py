"""Does a latency-bound kernel that requests the next product's weight into L2 make that
product faster? (GPU machine; an experiment for the decode step, not a part of the engine.)

    python benchmarks/l2_prefetch.py [--layers 64]

One request's decode step leaves DRAM nearly idle for whole kernels: the paged decode takes
~11 us of a layer and moves under 1 us of bytes, and the 4,096-column products run at ~45% of
the copy bandwidth (session 29). Each layer here is a stand-in for such a kernel
(benchmarks/l2_prefetch.cu: 8 CTAs, as one Llama-3 request's paged decode, spinning for
``SPIN_NS``) followed by a packed Q4_0 product of one bf16 row (``gemv_int8``, the engine's),
the stand-in copying the previous product's output into the next one's input so that the two
run in order. Arms per shape: the stand-in without a prefetch, with one of the whole weight
(or of its first ``PREFIX`` bytes) at several spin times. Weight copies cycle through more than
L2 holds, so only a prefetch puts a layer's weight there. Prints the product's median (p10,
p90) duration by CUPTI, and the stand-in's, per arm; the arms alternate, twice.

Session 29 (H200, call G; notes/gpu-kernels.md): the output product took 6.0 us with or
without its whole weight in L2, q/k/v 8.0 against 7.5, gate/up 20.3 against 19.2; and the
stand-in lasted until its prefetches were done (4 us became 6.0, 8.7, 35.4 us: ~1.6-1.9 TB/s
from 8 CTAs). Not a lever for the 4,096-column products.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from pathlib import Path

import mlx.core as mx
from gguf import GGMLQuantizationType

sys.path.insert(0, str(Path(__file__).parent))
from gpu_timeline import cupti_spans  # noqa: E402
from kernels import NOT_IN_L2, fresh_copy, random_blocks  # noqa: E402

from vexel_core.gpu import on_cuda  # noqa: E402
from vexel_core.quant.kernels import GatedAct, library  # noqa: E402
from vexel_core.quant.kernels.packed import pack_q4_0  # noqa: E402

Q4_0 = GGMLQuantizationType.Q4_0
K = 4096  # the products' columns (Llama-3-8B's hidden size)
SHAPES: dict[str, tuple[int, GatedAct | None]] = {  # rows, the gated product's act
    "output 4096x4096": (4096, None), "q/k/v 6144x4096": (6144, None),
    "gate/up 2x14336x4096": (2 * 14336, "silu")}
# (label, prefetch, spin ns, prefix bytes: 0 for the whole weight)
ARMS = [("no prefetch, 10 us", False, 10_000, 0), ("prefetch, 10 us", True, 10_000, 0),
        ("prefetch, 4 us", True, 4_000, 0), ("prefetch 24 MB, 10 us", True, 10_000, 24 << 20)]
CTAS, THREADS, PIECE = 8, 256, 64 << 10

STAND_IN = mx.fast.cuda_kernel(
    name="vx_stand_in", input_names=["y", "w"], output_names=["x"],
    source=(Path(__file__).parent / "l2_prefetch.cu").read_text())


def layer(y: mx.array, w: mx.array, act: GatedAct | None, prefetch: bool, spin_ns: int,
          prefix: int) -> mx.array:
    """The stand-in (copying y's first K values), then the product on w."""
    (x,) = STAND_IN(inputs=[y, w], template=[("PREFETCH", prefetch), ("SPIN_NS", spin_ns),
                                             ("PREFIX", prefix), ("PIECE", PIECE), ("K", K)],
                    grid=(CTAS * THREADS, 1, 1), threadgroup=(THREADS, 1, 1),
                    output_shapes=[(1, K)], output_dtypes=[mx.bfloat16])
    return library("cuda").gemv(x, w, Q4_0, act=act, packed=True)


def time_arm(arm: tuple[str, bool, int, int], copies: list[mx.array], y: mx.array,
             act: GatedAct | None, layers: int) -> str:
    """One arm's layers through the weight copies, timed: each kernel's median (p10, p90)."""
    _, prefetch, spin_ns, prefix = arm

    def run(n: int) -> None:
        nonlocal y
        for i in range(n):
            y = layer(y, copies[i % len(copies)], act, prefetch, spin_ns, prefix)
            mx.eval(y)

    run(2)
    spans = cupti_spans(lambda: run(layers))
    cells = []
    for kind in ("vx_stand_in", "vx_gemv"):
        d = sorted(b - s for s, b, kname, _ in spans if kind in kname)
        if d:
            cells.append(f"{kind.removeprefix('vx_')} {statistics.median(d):5.1f} "
                         f"({d[len(d) // 10]:.1f}, {d[len(d) * 9 // 10]:.1f})")
    return "   ".join(cells)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--layers", type=int, default=64, help="layers timed per arm and round")
    ap.add_argument("--shapes", default=",".join(SHAPES))
    a = ap.parse_args()
    if not on_cuda():
        sys.exit("l2_prefetch.py needs MLX's CUDA backend")
    for name in a.shapes.split(","):
        rows, act = SHAPES[name]
        one = pack_q4_0(random_blocks(Q4_0, rows, K))
        copies = [one] + [fresh_copy(one) for _ in range(math.ceil(NOT_IN_L2 / one.nbytes) - 1)]
        y = (mx.random.normal((1, K)) * 0.1).astype(mx.bfloat16)
        mx.eval(copies, y)
        print(f"{name}: {one.nbytes / 1e6:.1f} MB a weight, {len(copies)} copies; "
              f"us by CUPTI, median (p10, p90) of {a.layers} layers", flush=True)
        for _ in range(2):
            for arm in ARMS:
                print(f"  {arm[0]:24s} {time_arm(arm, copies, y, act, a.layers)}", flush=True)


if __name__ == "__main__":
    main()
