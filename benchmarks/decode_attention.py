"""Paged decode attention: GPU kernel time per layer by launch shape, to check `launch_shape`.

    python benchmarks/decode_attention.py [--json out.json] [--batches 1 4 16]
                                          [--contexts 128 256 512 1024 4096] [--write]
                                          [--pool-mb MB] [--warm]

Llama-3-8B heads (32 query, 8 KV, D = 128), bfloat16, blocks of 16 tokens. As in a decode
step: every layer has its own pools, the blocks of a sequence are scattered over them, and the
32 layers of a pass run one after the other (each kernel's ``after`` input is the previous
layer's output, so MLX's graph cannot run them side by side); the L2 cache is flushed before
each pass. Kernel durations come from CUPTI through PyTorch's profiler (the GPU machine has
PyTorch but no Nsight Systems): GPU time only. A split (S > 1) adds the merge kernel, whose GPU
time is counted; its launch also costs ~6 us of host time per layer, which is not.
``--write`` launches the kernel as a decode step does: storing each sequence's newest key and
value rows first (`paged_decode_writing`; no run without the prefetch then). ``--pool-mb``
makes each layer's key and value pools that large (a served model's are: 256 MB each for
Llama-3-8B with 16 GiB of KV cache), a sequence's blocks scattered over all of it. ``--warm``
leaves L2 as the last pass left it: the 32 layers' rows stay there where they fit (at one
sequence of 128 tokens, 16 MB), as they would in a step whose weights were streamed
evict-first; the difference from a flushed pass is what such a step could gain.

For each (batch, context) it prints, in microseconds per layer (median of 3 passes x 32
layers): the old choice (4 warps, session 5's split count), the new one (`launch_shape`),
the new one without the kernel's L2 prefetch, the best of the grid, and the grid of
(warps, splits) in {4, 8, 16} x {1, 2, 4, 8}.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
from collections.abc import Callable

import mlx.core as mx
import numpy as np

from vexel_core.attention import kernels
from vexel_core.gpu import device_resident

HQ, HKV, D, BS, LAYERS, PASSES = 32, 8, 128, 16, 32, 3
WARPS, SPLITS = (4, 8, 16), (1, 2, 4, 8)
Shape = tuple[int, int]  # (warps per CTA, spans per sequence)


def old_choice(batch: int, ctx: int) -> Shape:
    """Session 5's launch: 4 warps; spans up to 256 CTAs, at least 512 tokens each."""
    return 4, max(1, min(256 // (batch * HKV), ctx // 512))


def new_choice(batch: int, ctx: int) -> Shape:
    return kernels.launch_shape(batch, HKV, ctx, D, HQ // HKV, mx.bfloat16)


def per_layer_us(events: list[dict], batch: int, shapes: list[Shape]) -> dict[Shape, float]:
    """Median GPU microseconds per layer of each shape, from one trace's kernel events
    (chrome-trace dicts: name, ts, dur, args.grid, args.block). Within a batch, a decode
    kernel's grid (CTAs) and block (threads) name its shape; a merge kernel belongs to the
    decode kernel before it."""
    by_launch = {((batch * HKV * s, 1, 1), (w * 32, 1, 1)): (w, s) for w, s in shapes}
    samples: dict[Shape, list[float]] = {shape: [] for shape in shapes}
    last: Shape | None = None
    for e in sorted(events, key=lambda e: e["ts"]):
        if "paged_decode" not in e["name"]:
            continue
        if "merge" in e["name"]:
            if last is not None:
                samples[last][-1] += e["dur"]
            continue
        key = (tuple(e["args"]["grid"]), tuple(e["args"]["block"]))
        last = by_launch.get(key)
        if last is not None:
            samples[last].append(e["dur"])
    return {shape: statistics.median(s) if s else float("nan") for shape, s in samples.items()}


def trace(run: Callable[[], None]) -> list[dict]:
    """The kernel events of *run*, from CUPTI (PyTorch's profiler)."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        run()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.json")
        prof.export_chrome_trace(path)
        with open(path) as f:
            return [e for e in json.load(f)["traceEvents"]
                    if e.get("cat") == "kernel" and "dur" in e]


class Bench:
    def __init__(self, max_tokens: int, rng: np.random.Generator, write: bool = False,
                 pool_mb: int = 0, warm: bool = False) -> None:
        self.rng = rng
        self.write = write
        self.warm = warm
        self.n_blocks = max(-(-max_tokens // BS), pool_mb * 2**20 // (BS * HKV * D * 2))
        shape = (self.n_blocks * BS, HKV, D)
        self.k = [mx.random.normal(shape, dtype=mx.bfloat16) for _ in range(LAYERS)]
        self.v = [mx.random.normal(shape, dtype=mx.bfloat16) for _ in range(LAYERS)]
        self.scratch = mx.zeros((2**26,), dtype=mx.float32)  # 256 MiB, over the 50 MiB L2
        mx.eval(self.k, self.v, self.scratch)

    def inputs(self, batch: int, ctx: int) -> None:
        nb = -(-ctx // BS)
        tables = self.rng.permutation(self.n_blocks)[: batch * nb].reshape(batch, nb)
        self.tables = device_resident(mx.array(tables.astype(np.int32)))
        self.lens = device_resident(mx.array(np.full(batch, ctx, np.int32)))
        self.q = mx.random.normal((LAYERS, batch, HQ, D), dtype=mx.bfloat16)
        # the step's new rows, and the slot of each sequence's newest token
        self.k_new, self.v_new = (mx.random.normal((LAYERS, batch, HKV, D), dtype=mx.bfloat16)
                                  for _ in "kv")
        last = (ctx - 1) // BS
        self.slots = device_resident(mx.array((tables[:, last] * BS + (ctx - 1) % BS)
                                              .astype(np.int32)))
        self.ctx = ctx
        mx.eval(self.q, self.k_new, self.v_new)

    def one_pass(self, shape: Shape, prefetch: bool = True) -> None:
        if not self.warm:
            mx.eval(self.scratch.sum())  # evicts the previous pass's rows from L2
        out = mx.zeros((2,), dtype=mx.bfloat16)
        after = mx.zeros((1,), dtype=mx.int32)
        options = {"block_size": BS, "scale": D**-0.5, "max_context": self.ctx,
                   "warps": shape[0], "splits": shape[1]}
        for i in range(LAYERS):
            if self.write:  # `after`: the previous layer's write token
                out, after = kernels.paged_decode_writing(
                    self.q[i], self.k_new[i], self.v_new[i], self.slots, self.k[i], self.v[i],
                    self.tables, self.lens, after=after, **options)
            else:  # `after`: an int32 token from the previous output's first four bytes
                out = kernels.paged_decode(
                    self.q[i], self.k[i], self.v[i], self.tables, self.lens, prefetch=prefetch,
                    after=out.reshape(-1)[:2].view(mx.int32), **options)
        mx.eval(out, after)

    def measure(self, batch: int, shapes: list[Shape], prefetch: bool = True) -> dict[Shape, float]:
        for shape in shapes:  # compile (NVRTC, once per template) and warm up
            self.one_pass(shape, prefetch)

        def run() -> None:
            for shape in shapes:
                for _ in range(PASSES):
                    self.one_pass(shape, prefetch)
            mx.synchronize()

        return per_layer_us(trace(run), batch, shapes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="write the table here too")
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 4, 16])
    parser.add_argument("--contexts", type=int, nargs="+", default=[128, 256, 512, 1024, 4096])
    parser.add_argument("--write", action="store_true",
                        help="store each sequence's newest rows first, as a decode step does")
    parser.add_argument("--pool-mb", type=int, default=0,
                        help="each layer's key (and value) pool at least this large")
    parser.add_argument("--warm", action="store_true",
                        help="no flush of L2 between passes (the rows stay where they fit)")
    args = parser.parse_args()
    import torch  # before MLX launches anything, as benchmarks/gpu_timeline.py does

    del torch
    if limit := os.environ.get("VEXEL_DEVICE_MEMORY_LIMIT_GB"):
        mx.set_memory_limit(int(float(limit) * 2**30))
    bench = Bench(max(args.batches) * max(args.contexts), np.random.default_rng(0), args.write,
                  args.pool_mb, args.warm)
    grid = [(w, s) for w in WARPS for s in SPLITS]
    label = "{}x{}".format
    print("us of GPU time per layer; shapes are warps x splits (S > 1 adds the merge kernel)")
    print(f"{'B':>3} {'ctx':>5} | {'old':>5} {'us':>6} | {'new':>5} {'us':>6} {'no-pf':>6} | "
          f"{'best':>5} {'us':>6} | " + " ".join(f"{label(*g):>5}" for g in grid))
    rows = []
    for B in args.batches:
        for ctx in args.contexts:
            bench.inputs(B, ctx)
            old, new = old_choice(B, ctx), new_choice(B, ctx)
            shapes = list(dict.fromkeys([old, new, *grid]))
            us = bench.measure(B, shapes)
            no_prefetch = (float("nan") if args.write
                           else bench.measure(B, [new], prefetch=False)[new])
            best = min(shapes, key=lambda s: us[s])
            rows.append({"batch": B, "context": ctx, "old": old, "new": new, "best": best,
                         "new_without_prefetch_us": no_prefetch,
                         "us": {label(*s): us[s] for s in shapes}})
            print(f"{B:>3} {ctx:>5} | {label(*old):>5} {us[old]:6.1f} | {label(*new):>5} "
                  f"{us[new]:6.1f} {no_prefetch:6.1f} | {label(*best):>5} {us[best]:6.1f} | "
                  + " ".join(f"{us[g]:5.1f}" for g in grid), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
