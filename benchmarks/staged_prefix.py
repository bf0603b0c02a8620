"""Does the gate/up product finish sooner after its input appears when each CTA already holds
its first rows in shared memory? (GPU machine; an experiment for the decode step's 600 tok/s
goal, not a part of the engine.)

    python benchmarks/staged_prefix.py [--layers 24] [--rounds 2]

The feed-forward part reads 99 MB a layer at ~3.8 TB/s at best (~26 us), while the kernels
before it (q/k/v, the paged decode, the output product) leave DRAM mostly idle for ~25 us.
Shared memory holds ~29 MB on the H200 (132 SMs x 227 KB). A launch that stages the gate/up
rows' first part while the latency-bound work runs would read only the rest after its input
appears. benchmarks/staged_weights.py measured the small products (all rows staged); here the
product is too large to stage whole: 28,672 x 4,096 packed Q4_0 (66 MB), one CTA an SM, the
first ``SROWS`` rows of each CTA's run staged during a spin (staged_prefix.cu), the rest streamed
from DRAM after it. Arms: rows staged 0, 32 and 64 a CTA (0, 9.4 and 18.9 MB) after a 10 us spin,
all staged rows summed first or one a round of the stream (interleaved), and 0 without a spin
(the streaming code alone). The difference between the staged arms and
the unstaged one after the spin is what staging buys; the engine's gemv_int8 on the same matrix
is printed beside for the streaming code's quality. Timers from the CTAs' spin ends.

Session 51 (H200, notes/gpu-kernels.md): 18.9 MB staged, summed while the streamed rows' loads
fly, took 3.9 us off the product after the spin (17.15 -> 13.2-13.3 us); summed first, 1.5-2.6.
Beside real latency-bound kernels the staging would lengthen their memory round trips
(staged_attention.py).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path
from typing import Any

import mlx.core as mx
from gguf import GGMLQuantizationType

sys.path.insert(0, str(Path(__file__).parent))
from gpu_timeline import cupti_spans  # noqa: E402
from kernels import NOT_IN_L2, fresh_copy, random_blocks, relative_error  # noqa: E402

from vexel_core.gpu import on_cuda  # noqa: E402
from vexel_core.quant.kernels import library  # noqa: E402
from vexel_core.quant.kernels.packed import pack_q4_0  # noqa: E402

Q4_0 = GGMLQuantizationType.Q4_0
K, N = 4096, 2 * 14336  # Llama-3-8B's fused gate/up rows
CTAS, THREADS, ROW_BYTES = 132, 256, 4096 // 32 * 18  # one CTA an SM of the H200
HERE = Path(__file__).parent
# (rows staged a CTA, spin ns, interleaved)
ARMS = [(0, 0, False), (0, 10_000, False), (32, 10_000, False), (64, 10_000, False),
        (32, 10_000, True), (64, 10_000, True)]


def kernel(staged_rows: int) -> Any:
    shared = staged_rows * ROW_BYTES + K + 2 * 4 * (K // 32)
    return mx.fast.cuda_kernel(
        name=f"vx_prefix_{staged_rows}", input_names=["y", "w"], output_names=["out", "times"],
        source=(HERE / "staged_prefix.cu").read_text(),
        header=(HERE / "staged_common.cuh").read_text(), shared_memory=shared)


KERNELS = {rows: kernel(rows) for rows in {arm[0] for arm in ARMS}}


def product(y: mx.array, w: mx.array, staged_rows: int, spin_ns: int,
            interleave: bool) -> tuple[mx.array, ...]:
    out, times = KERNELS[staged_rows](
        inputs=[y, w], template=[("SROWS", staged_rows), ("SPIN_NS", spin_ns), ("N", N),
                                 ("INTERLEAVE", interleave)],
        grid=(CTAS * THREADS, 1, 1), threadgroup=(THREADS, 1, 1),
        output_shapes=[(1, N), (CTAS, 6)], output_dtypes=[mx.bfloat16, mx.uint64])
    return out, times


def check(w: mx.array) -> None:
    """The probe's product against the engine's on one input, as staged_weights.py checks."""
    y = (mx.random.normal((1, K)) * 0.5).astype(mx.bfloat16)
    ref = library("cuda").gemv(y, w, Q4_0, packed=True)
    for staged_rows, _, interleave in ARMS:
        out, _ = product(y, w, staged_rows, 1000, interleave)
        err = relative_error(out, ref)
        print(f"check {staged_rows} rows staged, interleaved {interleave}: max |probe - engine| "
              f"/ max |engine| {err:.2e} {'ok' if err <= 2**-6 else 'MISMATCH'}", flush=True)


def time_arm(arm: tuple[int, int, bool] | None, copies: list[mx.array], layers: int) -> str:
    """A chain of *layers* products over the weight copies (None: the engine's gemv_int8)."""
    y = (mx.random.normal((1, K)) * 0.5).astype(mx.bfloat16)
    timers: list[mx.array] = []

    def run(n: int) -> None:
        nonlocal y
        timers.clear()
        for i in range(n):
            if arm is None:
                out = library("cuda").gemv(y, copies[i % len(copies)], Q4_0, packed=True)
            else:
                out, t = product(y, copies[i % len(copies)], *arm)
                timers.append(t)
            y = (out[:, :K] * (0.5 / mx.maximum(mx.abs(out).max(), 1e-3))).astype(mx.bfloat16)
        mx.eval(y, timers)

    run(4)
    d = sorted(b - a for a, b, name, _ in cupti_spans(lambda: run(layers))
               if "vx_prefix" in name or "vx_gemv" in name)
    cells = [f"launch {statistics.median(d):5.1f} us"]
    if timers:
        after, rounded, summed, staged = [], [], [], []
        for t in timers:
            v: list[list[int]] = t.tolist()  # type: ignore[assignment]
            seen = statistics.median([row[2] for row in v])
            rounded.append(statistics.median([row[3] for row in v]) - seen)
            summed.append(statistics.median([row[4] for row in v]) - seen)
            after.append(max(row[5] for row in v) - seen)
            staged.append(max(row[1] - row[0] for row in v))
        cells.append(
            f"from the spin's end: rounded {statistics.median(rounded) / 1e3:4.2f}, staged rows "
            f"summed (interleaved: stream begun) {statistics.median(summed) / 1e3:4.2f}, last end "
            f"{statistics.median(after) / 1e3:5.2f}; staging took "
            f"{statistics.median(staged) / 1e3:5.2f} (slowest CTA)")
    return "   ".join(cells)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--layers", type=int, default=24, help="products timed per arm and round")
    ap.add_argument("--rounds", type=int, default=2)
    a = ap.parse_args()
    if not on_cuda():
        sys.exit("staged_prefix.py needs MLX's CUDA backend")
    w = pack_q4_0(random_blocks(Q4_0, N, K))
    copies = [w] + [fresh_copy(w) for _ in range(int(-(-NOT_IN_L2 // w.nbytes)) - 1)]
    mx.eval(copies)
    print(f"{N}x{K} packed Q4_0, {len(copies)} copies of {w.nbytes / 1e6:.1f} MB; {CTAS} CTAs; "
          f"medians of {a.layers} products", flush=True)
    check(w)
    for _ in range(a.rounds):
        print(f"  {'engine gemv_int8':41s} {time_arm(None, copies, a.layers)}", flush=True)
        for arm in ARMS:
            label = f"{arm[0]} rows staged, spin {arm[1] / 1e3:g} us{', interleaved' * arm[2]}"
            print(f"  {label:41s} {time_arm(arm, copies, a.layers)}", flush=True)


if __name__ == "__main__":
    main()
