"""The paged decode as one Llama-3-8B request's step launches it: the fused projection's heads
read in place, rotated in the kernel, the step's key and value rows written first. A workload
for Nsight Compute, or (``--time``) GPU time per launch by CUPTI.

    ncu --set full -k regex:vx_paged_decode --launch-skip 8 -c 2 \\
        python3 benchmarks/attention_ncu.py --contexts 128 384
    python3 benchmarks/attention_ncu.py --contexts 128 384 1024 --time 5

Each layer has its own 256 MB key and value pools (a served model's, with 16 GiB of KV cache),
the sequence's blocks scattered over them, as in benchmarks/decode_attention.py, whose pools
this borrows. A pass launches ``--layers`` layers, one after the other (each waits for the
previous one's write token). Under ncu: one pass a context (the first context's first
launches compile the kernel), each context's launch shape printed so that a profile's launches
can be told apart. With ``--time N``: N passes a context after one to warm up, L2 flushed
before each (the weights of a step stream through it between two layers' attention), and the
median kernel time of its launches printed.
"""

from __future__ import annotations

import argparse
import statistics
from functools import partial

import mlx.core as mx
import numpy as np
from decode_attention import BS, HKV, HQ, Bench, D, trace

from vexel_core.attention import kernels
from vexel_core.attention.base import Rotation


def one_pass(bench: Bench, heads: mx.array, ctx: int, rotation: Rotation,
             eval_each: bool) -> None:
    """One pass of ``len(heads)`` layers, L2 flushed first; *eval_each*: evaluated a launch at a
    time (for ncu's launch counts), else all at once."""
    mx.eval(bench.scratch.sum())  # evicts the previous pass's rows from L2
    after = mx.zeros((1,), dtype=mx.int32)
    for i in range(len(heads)):
        out, after = kernels.paged_decode_writing(
            heads[i], None, None, bench.slots, bench.k[i], bench.v[i], bench.tables,
            bench.lens, block_size=BS, scale=D**-0.5, max_context=ctx, after=after,
            rotation=rotation, packed=True)
        if eval_each:
            mx.eval(out, after)
    mx.eval(out, after)


def passes(bench: Bench, heads: mx.array, ctx: int, rotation: Rotation, n: int) -> None:
    for _ in range(n):
        one_pass(bench, heads, ctx, rotation, eval_each=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--contexts", type=int, nargs="+", default=[128, 384])
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--time", type=int, default=0, metavar="N",
                        help="time N passes a context (CUPTI) instead of one untimed pass")
    args = parser.parse_args()
    if args.time:
        import torch  # before MLX launches anything, as benchmarks/gpu_timeline.py does

        del torch
    bench = Bench(max(args.contexts), np.random.default_rng(0), write=True, pool_mb=256)
    inv_freq = mx.array(500000.0 ** (-np.arange(0, D, 2) / D), dtype=mx.float32)
    rotation = Rotation(D, False, 1.0, 1.0, inv_freq)
    for ctx in args.contexts:
        bench.inputs(1, ctx)
        heads = mx.random.normal((args.layers, 1, HQ + 2 * HKV, D), dtype=mx.bfloat16)
        mx.eval(heads, inv_freq)
        shape = kernels.launch_shape(1, HKV, ctx, D, HQ // HKV, mx.bfloat16)
        one_pass(bench, heads, ctx, rotation, eval_each=not args.time)
        if not args.time:
            print(f"context {ctx}: (warps, spans) {shape}", flush=True)
            continue
        run = partial(passes, bench, heads, ctx, rotation, args.time)
        us = [e["dur"] for e in trace(run) if "paged_decode" in e["name"]]
        print(f"context {ctx:5d} {shape[0]:2d}x{shape[1]}: {statistics.median(us):6.2f} us "
              f"a launch (median of {len(us)}; min {min(us):.2f})", flush=True)


if __name__ == "__main__":
    main()
