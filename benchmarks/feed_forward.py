"""A Llama-3-8B block's gated feed-forward part for one row (GPU machine): the one-launch kernel
(`KernelLibrary.feed_forward`, cuda/feed_forward.cuh) against the two launches it replaces
(`gemv_int8`'s gated mode, then the down product with its AddNorm epilogue), packed Q4_0, bf16.

    python benchmarks/feed_forward.py [--rounds 3]
    python benchmarks/feed_forward.py --untimed 2   # under Nsight Compute

Checked first on one input: h against the two launches' (session 36: the same bits), the same
bits from three launches, and the scratch's counts and flags left zero. Then each arm runs as a
chain of blocks (the next x is this one's normed output, so that MLX's graph orders the launches
that share a scratch), cycling through weight copies that never sit in L2 together, timed by CUPTI
(the arm's kernels' durations over a run of blocks, as gpu_timeline.py traces them; launch gaps
and host time not included), the arms alternated.

Session 27 reached this kernel through a probe with switches for each design choice (the
variants, a per-CTA phase timer from the GPU's global timer, and their numbers are in
notes/gpu-kernels.md, session 27): `git show a345f4512210:benchmarks/mlp_probe.py` and
`a345f4512210:benchmarks/mlp_probe.cuh` restore it.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

import mlx.core as mx
import numpy as np
from gguf import GGMLQuantizationType as Q
from gpu_timeline import cupti_spans  # benchmarks/gpu_timeline.py
from kernels import NOT_IN_L2, random_blocks  # benchmarks/kernels.py

from vexel_core.gpu import on_cuda
from vexel_core.quant.kernels import gguf_add_norm, gguf_gated, library
from vexel_core.quant.kernels.library import (
    add_norm_scratch,
    feed_forward_counts,
    feed_forward_scratch,
)
from vexel_core.quant.kernels.packed import pack_q4_0

K, F, N = 4096, 14336, 4096  # Llama-3-8B: hidden, intermediate
BLOCKS = 48  # feed-forward blocks a timed run
EPS = 1e-5


Weights = tuple[mx.array, ...]
Step = Callable[[mx.array, mx.array, Weights], tuple[mx.array, mx.array]]
Run = Callable[[list[Weights]], mx.array]  # a chain of blocks over weight copies


def block_weights() -> tuple[mx.array, mx.array, mx.array]:
    """A random Llama-3-8B block's fused gate/up and down matrices, packed Q4_0, and its
    norm's weight (bf16), evaluated."""
    wgu = pack_q4_0(random_blocks(Q.Q4_0, 2 * F, K))
    wd = pack_q4_0(random_blocks(Q.Q4_0, N, F))
    nw = (1 + 0.1 * mx.random.normal((N,))).astype(mx.bfloat16)
    mx.eval(wgu, wd, nw)
    return wgu, wd, nw


def weight_copies(first: Weights) -> list[Weights]:
    """*first* and enough copies of it that one run over them never finds a block in L2."""
    nbytes = sum(a.nbytes for a in first)
    copies = [first] + [tuple(a + mx.zeros((), a.dtype) for a in first)
                        for _ in range(int(-(-NOT_IN_L2 // nbytes)) - 1)]
    mx.eval(copies)
    return copies


def chain(step: Step, x: mx.array, resid: mx.array) -> Run:
    """One block after another over every weight copy, each continuing from the last output
    of the one before (of this call or the previous one): one ordered chain, so that MLX's
    graph runs the launches that share a scratch one after another."""
    state = [x, resid]

    def run(ws: list[Weights]) -> mx.array:
        for w in ws:
            state[1], state[0] = step(state[0], state[1], w)
        return state[0]
    return run


def time_arms(arms: list[tuple[str, Run]], weights: list[Weights], rounds: int,
              nbytes: int) -> None:
    """Each arm's chain over *weights*, BLOCKS blocks a run, the arms alternated for *rounds*
    rounds: the GPU us of our kernels a block (CUPTI) and *nbytes* a block over it."""
    print(f"{len(weights)} weight copies of {nbytes / 1e6:.1f} MB; GPU us a block "
          f"(CUPTI, {BLOCKS} blocks a run):")
    width = max(len(name) for name, _ in arms)
    for _ in range(rounds):
        for name, run in arms:
            mx.eval(run(weights))  # compiled, and the chain's state evaluated

            def timed(run: Run = run) -> None:
                for _ in range(BLOCKS // len(weights)):
                    mx.eval(run(weights))
            ours = [b - a for a, b, kernel, _ in cupti_spans(timed) if "vx_" in kernel]
            per_block = sum(ours) / BLOCKS
            print(f"  {name:{width}} {per_block:7.2f} us  {nbytes / per_block / 1e3:6.0f} GB/s"
                  f"  ({len(ours)} kernels)", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--untimed", type=int, metavar="N", default=0,
                        help="instead of timing, run the one launch N times over the weight "
                             "copies (under Nsight Compute: CUPTI takes one subscriber)")
    args = parser.parse_args()
    if not on_cuda():
        sys.exit("feed_forward.py needs MLX's CUDA backend")
    bf = mx.bfloat16
    wgu, wd, nw = block_weights()
    scratches = add_norm_scratch(), feed_forward_scratch(F)
    lib = library("cuda")

    def two_launches(x: mx.array, resid: mx.array, w: Weights) -> tuple[mx.array, mx.array]:
        mid = gguf_gated(x, w[0], Q.Q4_0, "silu", packed=True)
        assert mid is not None
        out = gguf_add_norm(mid, w[1], Q.Q4_0, resid, nw, EPS, scratches[0], packed=True)
        assert out is not None
        return out

    def one_launch(x: mx.array, resid: mx.array, w: Weights) -> tuple[mx.array, mx.array]:
        return lib.feed_forward(x, w[0], w[1], "silu", resid, nw, EPS, scratches[1])

    x = mx.random.normal((1, K)).astype(bf)
    resid = mx.random.normal((1, N)).astype(bf)
    ref_h, ref_n = (np.array(a.astype(mx.float32)) for a in two_launches(x, resid, (wgu, wd)))
    runs = [[np.array(a.astype(mx.float32)) for a in one_launch(x, resid, (wgu, wd))]
            for _ in range(3)]
    h, n = runs[0]
    same = all(np.array_equal(r[0], h) and np.array_equal(r[1], n) for r in runs)
    left = np.array(feed_forward_counts(scratches[1], F)).any()
    print(f"check: max|dh| {np.abs(h - ref_h).max():.4g} of {np.abs(ref_h).max():.4g} "
          f"({np.mean(h == ref_h):.3f} equal), max|dn| {np.abs(n - ref_n).max():.4g}; "
          f"three launches {'the same bits' if same else 'DIFFER'}; "
          f"scratch left {'NONZERO' if left else 'zero'}")

    weights = weight_copies((wgu, wd))
    if args.untimed:
        run = chain(one_launch, x, resid)
        for _ in range(args.untimed):
            mx.eval(run(weights))
        return
    time_arms([("two launches (gated, down + AddNorm)", chain(two_launches, x, resid)),
               ("one launch (feed_forward)", chain(one_launch, x, resid))],
              weights, args.rounds, wgu.nbytes + wd.nbytes)


if __name__ == "__main__":
    main()
