"""Kernel benchmark (GPU machine): GGUF-native products beside MLX's affine and bf16 products.

    python benchmarks/kernels.py [--formats Q4_0,Q4_1,Q5_0,Q5_1,Q8_0,Q4_K,Q5_K,Q6_K]
                                 [--rows 1,4,8,32,512] [--quick-formats Q2_K,Q3_K] [--sweep]
                                 [--json out.json]

At the Llama-3-8B shapes (rows x columns of W: 4096x4096, 1024x4096, 14336x4096, 4096x14336,
128256x4096) and 1, 4, 8, 32 and 512 activation rows (bf16), it times ``x @ W.T`` by:

* ``kernel``: `gguf_matmul` on the GGUF blocks (matrix-vector kernel, or dequantize + matmul
  from `PREFILL_ROWS`), and at 8 and 32 rows the other of the two (``alt``); at one row of
  Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K or Q6_K ``kernel`` is ``gemv_int8`` and ``alt`` the
  float matrix-vector kernel;
* ``affine``: the weight's MLX affine terms (`BlockWeight.affine_matmul`: one
  ``quantized_matmul`` for Q4_0 ... Q5_K, a few for Q2_K, Q3_K and Q6_K);
* ``bf16``: MLX's matmul on the dequantized bf16 matrix.

Timing: many products per evaluation (launch overhead amortised, as shared/device/README.md
measured), cycling through enough copies of the weights that they never sit in L2; the
median of several evaluations, divided by the products in each. The products of one
evaluation share no data, so MLX's CUDA graph may run them at the same time: the figure is a
throughput, which one product alone (Nsight Compute's figures, the README's) need not reach;
the copy bandwidth beside it is measured the same way. GB/s counts the bytes each
product must move (weights as stored, activations, output); "%copy" relates them to the copy
bandwidth measured at the start of the same run with a 16-byte-per-thread copy kernel.
``--quick-formats`` run only 14336x4096 at 1, 8 and 512 rows. ``--sweep`` times tilings of
the matrix-vector kernel first, at the given shapes and rows (one row of an `INT8_TYPES` format:
``gemv_int8``'s tilings and the float kernel's default). MLX's affine product is not timed
for Q2_K, Q3_K and Q6_K: it fails to launch on CUDA (notes/gpu-kernels.md).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

import mlx.core as mx
import numpy as np
from gguf import GGML_QUANT_SIZES, GGMLQuantizationType

from vexel_core.quant.formats import ALL_FORMATS
from vexel_core.quant.kernels import PREFILL_ROWS, GemvTiling, gguf_matmul, library
from vexel_core.quant.kernels.library import INT8_TYPES, Int8Tiling, default_tiling
from vexel_core.quant.measure import F16_FIELDS
from vexel_core.quant.weights import BlockWeight, Term

SHAPES = [(4096, 4096), (1024, 4096), (14336, 4096), (4096, 14336), (128256, 4096)]
REPEATS = 5
BYTES_PER_EVAL = 400e6  # products per evaluation: about this many bytes of weights
NOT_IN_L2 = 200e6  # weight copies cycled through: at least this many bytes (L2 is 50 MB)
FORMATS = {fmt.ggml_type.name: fmt for fmt in ALL_FORMATS}
AFFINE_FAILS_ON_CUDA = {"Q2_K", "Q3_K", "Q6_K"}  # cuGraphAddKernelNode: invalid argument


def random_blocks(ggml_type: GGMLQuantizationType, rows: int, cols: int) -> mx.array:
    """Random GGUF blocks made on the GPU (fast at 128256 rows); f16 fields as `random_raw`."""
    elems, nbytes = GGML_QUANT_SIZES[ggml_type]
    blocks = mx.random.randint(0, 256, (rows, cols // elems, nbytes), dtype=mx.uint8)
    for offset in F16_FIELDS[ggml_type.name]:
        scale = (mx.random.normal((rows, cols // elems, 1)) * 0.05).astype(mx.float16)
        blocks[..., offset : offset + 2] = scale.view(mx.uint8)
    return blocks.reshape(rows, -1)


def relative_error(got: mx.array, want: mx.array) -> float:
    """max |got - want| / max |want|, in float32: how a probe's output is judged against the
    engine's on the same input."""
    want32 = want.astype(mx.float32)
    return (float(mx.abs(got.astype(mx.float32) - want32).max().item())
            / float(mx.abs(want32).max().item()))


def fresh_copy(a: mx.array) -> mx.array:
    return a + mx.zeros((), a.dtype)


def weight_copies(first: mx.array) -> list[mx.array]:
    """*first* and fresh copies of it, `NOT_IN_L2` bytes in all, evaluated: a timing loop that
    cycles through them never finds its weight in L2."""
    weights = [first] + [fresh_copy(first) for _ in range(int(-(-NOT_IN_L2 // first.nbytes)) - 1)]
    mx.eval(weights)
    return weights


def copy_weight(w: BlockWeight) -> BlockWeight:
    terms = [Term(replace(t.matrix, packed=fresh_copy(t.matrix.packed),
                          scales=fresh_copy(t.matrix.scales), biases=fresh_copy(t.matrix.biases)),
                  t.span) for t in w.terms]
    return BlockWeight(lambda _: terms, w.shape, w.ggml_type, w._raw_parts, w.float32_products)


@dataclass
class Timing:
    us: float  # per product, GPU time of an evaluation over the products in it
    dispatch_us: float  # per product, Python time to build the graph
    gbps: float


def timed(fn: Callable[[Any], mx.array], operands: Sequence[Any], nbytes: float) -> Timing:
    """Per-product time of ``fn(operand)`` over many products in one evaluation."""
    n = max(len(operands), min(64, max(8, math.ceil(BYTES_PER_EVAL / nbytes))))
    mx.eval(fn(operands[0]))  # compile outside the timing
    evals, builds = [], []
    for _ in range(REPEATS + 1):
        t = time.perf_counter()
        outs = [fn(operands[i % len(operands)]) for i in range(n)]
        builds.append(time.perf_counter() - t)
        mx.synchronize()
        t = time.perf_counter()
        mx.eval(outs)
        mx.synchronize()
        evals.append(time.perf_counter() - t)
        del outs
    per = statistics.median(evals[1:]) / n
    return Timing(per * 1e6, statistics.median(builds[1:]) / n * 1e6, nbytes / per / 1e9)


def copies_of(a: Any, nbytes: float, copy: Callable[[Any], Any]) -> list[Any]:
    out = [a] + [copy(a) for _ in range(math.ceil(NOT_IN_L2 / nbytes) - 1)]
    mx.eval([c if isinstance(c, mx.array) else [t.matrix.arrays() for t in c.terms] for c in out])
    return out


def copy_bandwidth() -> dict[str, float]:
    """GB/s (bytes read + written) of a 1 GiB copy: our 16-byte kernel and MLX's own copy."""
    body = (Path(__file__).parent / "copy.cu").read_text()
    kernel = mx.fast.cuda_kernel(name="vx_copy", input_names=["src"], output_names=["dst"],
                                 source=body)
    src = mx.random.randint(0, 2**31, (1 << 28,), dtype=mx.uint32)
    mx.eval(src)
    nbytes = 2 * src.nbytes

    def ours(a: mx.array) -> mx.array:
        return kernel(inputs=[a], grid=(a.size // 4, 1, 1), threadgroup=(256, 1, 1),
                      output_shapes=[a.shape], output_dtypes=[a.dtype])[0]

    return {"copy_kernel": timed(ours, [src], nbytes).gbps,
            "mlx_elementwise": timed(lambda a: a + 1, [src], nbytes).gbps}


def io_bytes(x: mx.array, rows: int) -> int:
    return x.nbytes + x.shape[0] * rows * x.dtype.size


def bench_format(name: str, shapes: Sequence[tuple[int, int]], row_counts: Sequence[int],
                 copy_gbps: float, bf16_cache: dict[tuple[int, int, int], Timing]) -> list[dict]:
    ggml_type = GGMLQuantizationType[name]
    lib = library("cuda")
    results = []
    for n, k in shapes:
        raw = random_blocks(ggml_type, n, k)
        mx.eval(raw)
        weight = FORMATS[name].load(np.array(raw), (n, k))
        raws = copies_of(raw, raw.nbytes, fresh_copy)
        weights = ([] if name in AFFINE_FAILS_ON_CUDA else
                   copies_of(weight, weight.nbytes, copy_weight))
        w16 = lib.dequantize(raw, ggml_type, mx.bfloat16)
        need_bf16 = any((n, k, m) not in bf16_cache for m in row_counts)
        w16s = copies_of(w16, w16.nbytes, fresh_copy) if need_bf16 else []
        for m in row_counts:
            x = mx.random.normal((m, k)).astype(mx.bfloat16)
            io = io_bytes(x, n)
            rec: dict[str, Any] = {"format": name, "rows": n, "cols": k, "m": m}
            timings = {
                "kernel": timed(lambda r, x=x: gguf_matmul(x, r, ggml_type), raws,
                                raw.nbytes + io),
            }
            if name not in AFFINE_FAILS_ON_CUDA:
                timings["affine"] = timed(lambda w, x=x: w.affine_matmul(x), weights,
                                          weight.nbytes + io)
            if m in (8, 32):
                alt = ((lambda r, x=x: lib.gemv(x, r, ggml_type)) if m >= PREFILL_ROWS else
                       (lambda r, x=x: x @ lib.dequantize(r, ggml_type, x.dtype).T))
                timings["alt"] = timed(alt, raws, raw.nbytes + io)
            elif m == 1 and ggml_type in INT8_TYPES:
                timings["alt"] = timed(
                    lambda r, x=x: lib.gemv(x, r, ggml_type, tiling=default_tiling("cuda", 1)),
                    raws, raw.nbytes + io)
            if (n, k, m) not in bf16_cache:
                bf16_cache[(n, k, m)] = timed(lambda w, x=x: x @ w.T, w16s, w16.nbytes + io)
            timings["bf16"] = bf16_cache[(n, k, m)]
            for label, t in timings.items():
                rec[label] = {"us": t.us, "gbps": t.gbps, "pct_copy": 100 * t.gbps / copy_gbps,
                              "dispatch_us": t.dispatch_us}
            results.append(rec)
            print_row(rec)
        del raw, weight, raws, weights, w16, w16s
        mx.clear_cache()
    return results


HEADER = (f"{'format':6} {'shape':>12} {'m':>4} | {'kernel us':>9} {'GB/s':>6} {'%cp':>4} | "
          f"{'alt us':>7} | {'affine us':>9} {'GB/s':>6} {'%cp':>4} | {'bf16 us':>8} {'GB/s':>6} | "
          f"{'k/bf16':>6} {'k/aff':>6}")


def print_row(r: dict) -> None:
    k, b = r["kernel"], r["bf16"]
    alt = f"{r['alt']['us']:7.1f}" if "alt" in r else " " * 7
    a = r.get("affine")
    affine = (f"{a['us']:9.1f} {a['gbps']:6.0f} {a['pct_copy']:4.0f}" if a else
              f"{'(fails)':>9} {'':6} {'':4}")
    ratio = f"{k['us'] / a['us']:6.2f}" if a else f"{'-':>6}"
    print(f"{r['format']:6} {r['rows']:>6}x{r['cols']:<5} {r['m']:>4} | {k['us']:9.1f} "
          f"{k['gbps']:6.0f} {k['pct_copy']:4.0f} | {alt} | {affine} | {b['us']:8.1f} "
          f"{b['gbps']:6.0f} | {k['us'] / b['us']:6.2f} {ratio}", flush=True)


SWEEP_TILINGS = [GemvTiling(4, 2, 2), GemvTiling(4, 4, 2), GemvTiling(8, 2, 2),
                 GemvTiling(8, 4, 2), GemvTiling(16, 2, 2), GemvTiling(2, 2, 2),
                 GemvTiling(8, 2, 3), GemvTiling(4, 1, 2)]
# gemv_int8 at one row (warps/stages/sub-blocks a lane/CTAs); some exceed 48 KiB of shared
# memory for Q8_0 or Q6_K and are reported as failing to compile.
SWEEP_INT8 = [Int8Tiling(warps=w, stages=st, per_lane=pl, ctas=c)
              for w, st, pl, c in [(8, 3, 1, 528), (8, 3, 2, 528), (8, 4, 1, 528),
                                   (8, 2, 2, 528), (8, 3, 2, 264), (8, 3, 2, 1056),
                                   (4, 4, 2, 1056), (16, 2, 1, 264), (16, 2, 2, 264)]]


def tiling_label(tiling: GemvTiling | Int8Tiling) -> str:
    """A tiling's numbers joined by "/" (an `Int8Tiling`: warps/stages/sub-blocks a lane/CTAs,
    then "+x" when x is held in registers)."""
    values = vars(tiling).values()
    held = "+x" if getattr(tiling, "x_in_registers", False) else ""
    return "/".join(str(v) for v in values if not isinstance(v, bool)) + held


def sweep(names: Sequence[str], shapes: Sequence[tuple[int, int]], row_counts: Sequence[int],
          copy_gbps: float) -> list[dict]:
    """Matrix-vector tilings (weight rows/warps/stages per CTA) at the given shapes and rows."""
    lib = library("cuda")
    out = []
    for name in names:
        ggml_type = GGMLQuantizationType[name]
        for n, k in shapes:
            raw = random_blocks(ggml_type, n, k)
            raws = copies_of(raw, raw.nbytes, fresh_copy)
            for m in row_counts:
                x = mx.random.normal((m, k)).astype(mx.bfloat16)
                cells = []
                # one row of an int8 format: its tilings beside the float kernel's default
                # (session 2 swept the float kernel's tilings)
                tilings: list[GemvTiling | Int8Tiling] = (
                    [*SWEEP_INT8, default_tiling("cuda", 1)]
                    if m == 1 and ggml_type in INT8_TYPES else list(SWEEP_TILINGS))
                for tiling in tilings:
                    label = tiling_label(tiling)
                    if isinstance(tiling, Int8Tiling):
                        label = f"int8:{label}"
                    gemv = partial(lib.gemv, x, ggml_type=ggml_type, tiling=tiling)
                    try:
                        t = timed(gemv, raws, raw.nbytes + io_bytes(x, n))
                    except (RuntimeError, ValueError) as e:  # e.g. too much shared memory
                        cells.append(f"{label}:fails ({str(e)[:60]})")
                        continue
                    cells.append(f"{label}:{t.us:6.1f}us{100 * t.gbps / copy_gbps:4.0f}%")
                    out.append({"format": name, "rows": n, "cols": k, "m": m,
                                "tiling": label, "us": t.us, "gbps": t.gbps})
                print(f"sweep {name:5} {n}x{k} m={m}: " + "  ".join(cells), flush=True)
            del raw, raws
            mx.clear_cache()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--formats", default="Q4_0,Q4_1,Q5_0,Q5_1,Q8_0,Q4_K,Q5_K,Q6_K")
    ap.add_argument("--quick-formats", default="Q2_K,Q3_K")
    ap.add_argument("--rows", default="1,4,8,32,512")
    ap.add_argument("--shapes", default=",".join(f"{n}x{k}" for n, k in SHAPES))
    ap.add_argument("--sweep", action="store_true")
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    split = [s for s in a.formats.split(",") if s]
    quick = [s for s in a.quick_formats.split(",") if s]
    shapes = [(int(n), int(k)) for n, k in (s.split("x") for s in a.shapes.split(","))]
    row_counts = [int(v) for v in a.rows.split(",")]

    print(f"mlx {mx.__version__} {mx.default_device()}")
    bw = copy_bandwidth()
    copy_gbps = bw["copy_kernel"]
    print(f"copy bandwidth: kernel {bw['copy_kernel']:.0f} GB/s, "
          f"MLX elementwise {bw['mlx_elementwise']:.0f} GB/s (read + write)")
    report: dict[str, Any] = {"mlx": mx.__version__, "copy_gbps": bw, "results": []}
    if a.sweep:
        report["sweep"] = sweep(split, shapes, row_counts, copy_gbps)
    print(HEADER)
    bf16_cache: dict[tuple[int, int, int], Timing] = {}
    for name in split:
        report["results"] += bench_format(name, shapes, row_counts, copy_gbps, bf16_cache)
    for name in quick:
        report["results"] += bench_format(name, [(14336, 4096)], [1, 8, 512], copy_gbps,
                                          bf16_cache)
    if a.json:
        Path(a.json).write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
