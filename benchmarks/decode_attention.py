"""Paged decode attention by context split: microseconds per layer, to choose `MIN_SPAN`.

    python benchmarks/decode_attention.py [--json out.json]

Llama-3-8B heads (32 query, 8 KV, D = 128), bfloat16, blocks scattered over a 1 GiB pool.
Each timing evaluates 32 launches (one per layer, as in a step), so MLX's per-launch cost is
part of it, as it is in the engine. For each batch and context it prints the time at every
span count and the best; `split_count` should pick about that.
"""

from __future__ import annotations

import argparse
import json
import time

import mlx.core as mx
import numpy as np

from vexel_core.attention import kernels

HQ, HKV, D, BS, LAYERS = 32, 8, 128, 16, 32
POOL_SLOTS = 2**30 // (2 * HKV * D * 2)  # keys and values, bfloat16


def per_layer_us(B: int, ctx: int, splits: int, pools: tuple[mx.array, mx.array],
                 rng: np.random.Generator) -> float:
    nb = -(-ctx // BS)
    tables = mx.array(rng.choice(POOL_SLOTS // BS, (B, nb), replace=False).astype(np.int32))
    lens = mx.array(np.full(B, ctx, np.int32))
    q = mx.random.normal((LAYERS, B, HQ, D)).astype(mx.bfloat16)
    mx.eval(q, tables, lens)

    def step() -> None:
        mx.eval([kernels.paged_decode(q[i], *pools, tables, lens, block_size=BS,
                                      scale=D**-0.5, splits=splits) for i in range(LAYERS)])

    step()  # compile
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        step()
        best = min(best, time.perf_counter() - t0)
    return best / LAYERS * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="write the table here too")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    pools = tuple(mx.random.normal((POOL_SLOTS, HKV, D)).astype(mx.bfloat16) for _ in range(2))
    mx.eval(pools)
    splits = (1, 2, 4, 8, 16)
    rows = []
    print(f"{'B':>3} {'ctx':>6} " + " ".join(f"{'S=' + str(s):>8}" for s in splits)
          + "   best  split_count")
    for B in (1, 2, 4, 16):
        for ctx in (128, 256, 512, 1024, 2048, 4096, 8192):
            us = [per_layer_us(B, ctx, s, pools, rng) for s in splits]
            best = splits[int(np.argmin(us))]
            chosen = kernels.split_count(B, HKV, ctx)
            rows.append({"batch": B, "context": ctx, "us": dict(zip(splits, us, strict=True)),
                         "best": best, "split_count": chosen})
            print(f"{B:>3} {ctx:>6} " + " ".join(f"{u:8.1f}" for u in us)
                  + f"   S={best:<3} S={chosen}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
