"""Probe (GPU machine): a Llama-3-8B block's feed-forward part for one row in one launch
(`mlp_probe.cuh`) against the engine's two (`gemv_int8` gated, then down + AddNorm), Q4_0
repacked, bf16 activations.

    python benchmarks/mlp_probe.py [--variants S/WARPS/PASS2/PF/ATOM/PIPE,...] [--check-only]

Each arm runs as a chain of products (the next x is this one's normed output, so that MLX's
graph orders launches that share a scratch), cycling through weight copies that never sit in
L2 together; the time is the GPU's, the arm's kernels' durations under CUPTI (torch's
profiler, as gpu_timeline.py) over a run of blocks: launch gaps not included. The fused results are
checked against the engine's two launches on the same input: h within one bf16 step of its
magnitude (the down sums add in another order), normed likewise.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import mlx.core as mx
import numpy as np
from gguf import GGMLQuantizationType as Q
from gpu_timeline import cupti_spans  # benchmarks/gpu_timeline.py
from kernels import NOT_IN_L2, random_blocks  # benchmarks/kernels.py

from vexel_core.gpu import cuda_header, float_constant, on_cuda
from vexel_core.quant.kernels import gguf_add_norm, gguf_gated, library
from vexel_core.quant.kernels.library import _HEADERS, add_norm_scratch
from vexel_core.quant.kernels.packed import pack_q4_0

K, F, N = 4096, 14336, 4096  # Llama-3-8B: hidden, intermediate
BLOCKS = 48  # feed-forward blocks a timed run
VARIANTS = ",".join(["64/8/4/0/3/3", "64/8/4/0/3/35", "64/8/2/0/3/3", "64/8/4/0/3/19",
                     "64/8/4/0/1/3", "64/8/4/0/1/35"])
HERE = Path(__file__).parent
QUANT = HERE.parent / "vexel_core" / "quant" / "kernels"
BODY = """
vx::mlp_q4_0<T, WARPS, S, 1, KC, NC, PASS2, PF, ATOM, PIPE>(wgu, wd, (const T*)x, residual,
    nw, eps[0], const_cast<float*>(acc), const_cast<uint32_t*>(count), h, normed,
    int(wgu_shape[0]) / 2);
"""


def fused_kernel(times: bool = False):
    header = cuda_header([QUANT / f for f in _HEADERS["cuda"]] + [HERE / "mlp_probe.cuh"])
    body = BODY.replace(");", ", times);") if times else BODY
    return mx.fast.cuda_kernel("vx_mlp_probe" + "_times" * times,
                               ["wgu", "wd", "x", "residual", "nw", "eps", "acc", "count"],
                               ["h", "normed"] + ["times"] * times, body, header)


def phases(kernel, run_args: dict, ctas: int) -> None:
    """Where one launch's time goes: each CTA's phases from the GPU's global timer. The
    launch follows others in the same evaluation (run_args' x is their output): a GPU left
    idle starts slowly."""
    _, _, times = kernel(**run_args, output_shapes=[(1, N), (1, N), (ctas, 5)],
                         output_dtypes=[mx.bfloat16, mx.bfloat16, mx.uint64],
                         init_value=0)
    t = np.array(times, dtype=np.int64)
    t0 = t[:, 0].min()
    end = t[:, 4].max()  # the last CTA's end (the others leave it at zero)
    us = (t[:, :4] - t0) / 1e3
    q = lambda a: " / ".join(f"{v:5.1f}" for v in np.percentile(a, [0, 50, 100]))  # noqa: E731
    print(f"    start {q(us[:, 0])}; x rounded {q(us[:, 1])}; slice {q(us[:, 2])}; down "
          f"{q(us[:, 3])}; end {(end - t0) / 1e3:5.1f} us (min / median / max over CTAs)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", default=VARIANTS, help="S/WARPS/PASS2/PF/ATOM/PIPE,...")
    parser.add_argument("--check-only", action="store_true")
    parser.add_argument("--times", action="store_true",
                        help="also each variant's phases in one launch (the GPU's timer)")
    args = parser.parse_args()
    if not on_cuda():
        sys.exit("mlp_probe.py needs MLX's CUDA backend")
    bf = mx.bfloat16
    wgu = pack_q4_0(random_blocks(Q.Q4_0, 2 * F, K))
    wd = pack_q4_0(random_blocks(Q.Q4_0, N, F))
    nw = (1 + 0.1 * mx.random.normal((N,))).astype(bf)
    eps = 1e-5
    scratch = add_norm_scratch()
    acc, count = mx.zeros((2 * N,), mx.float32), mx.zeros((4,), mx.uint32)  # ATOM 3: int64
    mx.eval(wgu, wd, nw, acc, count)
    kernel = fused_kernel()

    def separate(x, resid, w):
        mid = gguf_gated(x, w[0], Q.Q4_0, "silu", packed=True)
        return gguf_add_norm(mid, w[1], Q.Q4_0, resid, nw, eps, scratch, packed=True)

    def launch(x, resid, w, s, warps, pass2, pf, atom, pipe) -> dict:
        return dict(inputs=[w[0], w[1], x, resid, nw, float_constant(eps), acc, count],
                    template=[("T", bf), ("WARPS", warps), ("S", s), ("KC", K), ("NC", N),
                              ("PASS2", pass2), ("PF", pf), ("ATOM", atom), ("PIPE", pipe)],
                    grid=(F // s * warps * 32, 1, 1), threadgroup=(warps * 32, 1, 1))

    def fused(x, resid, w, *v):
        if v[5] & 16:  # x comes rounded: round_x's buffer (its launch is not counted)
            x = library("cuda").round_x(x)
        h, normed = kernel(**launch(x, resid, w, *v), output_shapes=[(1, N), (1, N)],
                           output_dtypes=[bf, bf])
        return h, normed

    variants = [tuple(int(v) for v in spec.split("/")) for spec in args.variants.split(",")]
    x = mx.random.normal((1, K)).astype(bf)
    resid = mx.random.normal((1, N)).astype(bf)
    ref_h, ref_n = separate(x, resid, (wgu, wd))
    mx.eval(ref_h, ref_n)
    for v in variants:
        h, n = fused(x, resid, (wgu, wd), *v)
        mx.eval(h, n)
        dh = mx.abs(h.astype(mx.float32) - ref_h.astype(mx.float32)).max().item()
        dn = mx.abs(n.astype(mx.float32) - ref_n.astype(mx.float32)).max().item()
        big_h = mx.abs(ref_h.astype(mx.float32)).max().item()
        big_n = mx.abs(ref_n.astype(mx.float32)).max().item()
        ok = dh <= big_h / 128 and dn <= big_n / 128
        print(f"check {'/'.join(map(str, v))}: max|dh| {dh:.4g} of {big_h:.4g}, max|dn| "
              f"{dn:.4g} of {big_n:.4g}, counts left {count.tolist()[0]}, acc left "
              f"{mx.abs(acc).max().item():.3g}: {'ok' if ok else 'MISMATCH'}", flush=True)
    if args.check_only:
        return

    nbytes = wgu.nbytes + wd.nbytes
    weights = [(wgu, wd)] + [tuple(a + mx.zeros((), a.dtype) for a in (wgu, wd))
                             for _ in range(int(-(-NOT_IN_L2 // nbytes)) - 1)]
    mx.eval(weights)
    if args.times:
        timer = fused_kernel(times=True)
        for v in variants:
            print(f"  phases of {'/'.join(map(str, v))}, two launches:")
            for _ in range(2):
                xs, r = x, resid
                for w in weights[1:]:  # the engine's launches first; weights[0] the coldest
                    r, xs = separate(xs, r, w)
                if v[5] & 16:
                    xs = library("cuda").round_x(xs)
                phases(timer, launch(xs, r, weights[0], *v), F // v[0])

    def chain(step):
        """One block after another over every weight copy, each continuing from the last
        output of the one before (of this call or the previous one): one ordered chain."""
        state = [x, resid]

        def run(ws):
            for w in ws:
                state[1], state[0] = step(state[0], state[1], w)
            return state[0]
        return run

    arms = [("engine: gated + down/AddNorm", chain(separate))]
    arms += [(f"fused {'/'.join(map(str, v))}", chain(lambda a, b, c, v=v: fused(a, b, c, *v)))
             for v in variants]
    print(f"{len(weights)} weight copies of {nbytes / 1e6:.1f} MB; GPU us a block's "
          f"feed-forward (CUPTI: the arm's kernels, {BLOCKS} blocks a run):")
    for _ in range(3):  # rounds, alternated
        for name, run in arms:
            name_ = name.split(":")[0]
            mx.eval(run(weights))  # compiled, and the chain's state evaluated
            spans = cupti_spans(lambda run=run: [mx.eval(run(weights))
                                                 for _ in range(BLOCKS // len(weights))])
            ours = [(b - a, name) for a, b, name, _ in spans if "vx_" in name
                    and (name_ == "engine" or "round_x" not in name)]
            per_block = sum(d for d, _ in ours) / BLOCKS
            print(f"  {name:36} {per_block:7.1f} us  {nbytes / per_block / 1e3:6.0f} GB/s  "
                  f"({len(ours)} kernels)", flush=True)


if __name__ == "__main__":
    main()
