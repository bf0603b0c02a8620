"""gemv_int8's AddNorm epilogue beside what it replaces (GPU machine): kernel durations by
CUPTI (PyTorch's profiler, as benchmarks/gpu_timeline.py), one bf16 row of Q4_0 repacked, as
a Llama-3-8B layer's output product (4096x4096) and down product (4096x14336) run:

    python benchmarks/add_norm.py [--launches 64]

Per shape, three arms, each launch evaluated alone (two in flight could share the GPU; MLX's
CUDA graphs follow the data), through weight copies that together pass L2:

* ``plain``: the product alone (``gemv_int8``);
* ``separate``: the product, then ``add_rms_norm`` (main's engine);
* ``fused``: ``gemv_add_norm``, each launch adding into the residual the last one wrote.

Prints each kernel's median, p10 and p90 duration per arm.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from functools import partial
from pathlib import Path

import mlx.core as mx
from gguf import GGMLQuantizationType

sys.path.insert(0, str(Path(__file__).parent))
from gpu_timeline import cupti_spans  # noqa: E402
from kernels import NOT_IN_L2, fresh_copy, random_blocks  # noqa: E402

from vexel_core.model.kernels import add_rms_norm  # noqa: E402
from vexel_core.quant.kernels import library  # noqa: E402
from vexel_core.quant.kernels.library import add_norm_scratch  # noqa: E402
from vexel_core.quant.kernels.packed import pack_q4_0  # noqa: E402

Q4_0 = GGMLQuantizationType.Q4_0
SHAPES = {"output 4096x4096": (4096, 4096), "down 4096x14336": (4096, 14336)}
ARMS = ("plain", "separate", "fused")
EPS = 1e-5


def run_arm(arm: str, copies: list[mx.array], x: mx.array, residual: mx.array,
            weight: mx.array, scratch: mx.array, launches: int) -> None:
    lib = library("cuda")
    r = residual
    for i in range(launches):
        raw = copies[i % len(copies)]
        if arm == "plain":
            mx.eval(lib.gemv(x, raw, Q4_0, packed=True))
            continue
        if arm == "separate":
            y = lib.gemv(x, raw, Q4_0, packed=True)
            r, normed = add_rms_norm(r, y, weight, EPS, backend="cuda")
        else:
            r, normed = lib.gemv_add_norm(x, raw, Q4_0, r, weight, EPS, scratch, packed=True)
        mx.eval(r, normed)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--launches", type=int, default=64)
    args = ap.parse_args()
    for label, (rows, cols) in SHAPES.items():
        one = pack_q4_0(random_blocks(Q4_0, rows, cols))
        copies = [one] + [fresh_copy(one) for _ in range(math.ceil(NOT_IN_L2 / one.nbytes) - 1)]
        x = (mx.random.normal((1, cols)) * 0.1).astype(mx.bfloat16)
        residual = mx.random.normal((1, rows)).astype(mx.bfloat16)
        weight = (1 + 0.1 * mx.random.normal((rows,))).astype(mx.bfloat16)
        scratch = add_norm_scratch()
        mx.eval(copies, x, residual, weight)
        print(f"== {label}: {len(copies)} weight copies, {args.launches} launches an arm")
        for arm in ARMS:
            run_arm(arm, copies, x, residual, weight, scratch, 2)  # NVRTC compiles here
            spans = cupti_spans(partial(run_arm, arm, copies, x, residual, weight, scratch,
                                        args.launches))
            by_name: dict[str, list[float]] = {}
            for a, b, name, _ in spans:
                by_name.setdefault(name.split("(")[0][-60:], []).append(b - a)
            for name, durations in sorted(by_name.items(), key=lambda kv: -len(kv[1])):
                d = sorted(durations)
                print(f"  {arm:9s} {len(d):4d} x median {statistics.median(d):6.1f} us "
                      f"(p10 {d[len(d) // 10]:.1f}, p90 {d[len(d) * 9 // 10]:.1f})  {name}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
