"""Does a product whose CTAs hold their weight rows in shared memory before its input exists
finish sooner after that input appears? (GPU machine; an experiment for the decode step's
600 tok/s goal, not a part of the engine.)

    python benchmarks/staged_weights.py [--layers 48] [--rounds 2] [--spin 10]
        [--shapes "output 4096x4096,q/k/v 6144x4096"] [--arms spin,norm,stream]

One request's layer has three latency-bound launches (q/k/v 7 us, paged decode ~11, output +
AddNorm 9; their bytes ~4, <1 and ~2.5 us) and every fusion tried so far kept each phase's
chain of loads after its wait (sessions 22, 30, 37: notes/gpu-kernels.md). The whole output
weight of Llama-3-8B (4096x4096 Q4_0, 9.4 MB) fits in the shared memory of 128 CTAs (74 KB
each), and the paged decode leaves DRAM idle for ~10 us: a launch whose product CTAs copy their
rows in while the attention runs would be left, once the attention's output appears, with the
rounding of x, ~0.3 us of shared-memory reads and the reductions.

Each layer here is a stand-in and a product of one bf16 row by a packed Q4_0 weight (the
output's or q/k/v's shape; benchmarks/staged_weights.cu), chained (the next input is this
output) over weight copies that never sit in L2 together. Groups of arms (``--arms``):
* ``spin``: the stand-in is the paged decode's, 8 CTAs spinning ``--spin`` us, then writing x:
  ``apart, engine`` (l2_prefetch.cu's stand-in launch, then the engine's ``gemv_int8``), ``one
  launch, staged`` (stand-in and product CTAs in one launch, rows staged before the wait; ``xt
  1``: x rounded by one thread a block instead of two), ``one launch, after`` (rows loaded only
  after the wait, as the fusions tried so far);
* ``norm``: the same with the AddNorm epilogue (output shape only), and ``apart, probe + norm``
  (the probe's product as a launch of its own, beside the engine's);
* ``stream``: the stand-in is the feed-forward's down phase (every CTA reads its share of 33 MB
  and all wait for all), the rows staged during it, after it, or loaded after the count.
Prints per arm the layer's time (its kernels' span by CUPTI: launch gaps included, as in the
engine's graph) and, for the one-launch arms, the probe's own timers from the release (the
last producer's, or the stream's last count): x seen, x rounded, rows summed (CTAs' medians),
the last CTA's end. First it checks the probe's output against the engine's on one input.

Session 51 (H200, notes/gpu-kernels.md): one launch with the rows staged 2.6-3.4 us shorter
than two (the output product, with and without its AddNorm, and q/k/v); with the rows loaded
after the wait, 0.4-1.2 us longer. With the engine's own paged decode in place of the stand-in
the gain vanished (benchmarks/staged_attention.py): the staging lengthens its round trips.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import mlx.core as mx
from gguf import GGMLQuantizationType

sys.path.insert(0, str(Path(__file__).parent))
from gpu_timeline import cupti_spans, median_group_span  # noqa: E402
from kernels import NOT_IN_L2, fresh_copy, random_blocks, relative_error  # noqa: E402
from l2_prefetch import STAND_IN as _STAND_IN  # noqa: E402

from vexel_core.gpu import on_cuda  # noqa: E402
from vexel_core.quant.kernels import library  # noqa: E402
from vexel_core.quant.kernels.library import add_norm_scratch  # noqa: E402
from vexel_core.quant.kernels.packed import pack_q4_0  # noqa: E402

Q4_0 = GGMLQuantizationType.Q4_0
K = 4096  # Llama-3-8B's hidden size: the products' columns
SHAPES = {"output 4096x4096": 4096, "q/k/v 6144x4096": 6144}  # name: rows
PRODUCERS, ROWS, THREADS, EPS = 8, 32, 256, 1e-5  # ROWS: weight rows a product CTA
HERE = Path(__file__).parent
SOURCE, HEADER = (HERE / "staged_weights.cu").read_text(), (HERE / "staged_common.cuh").read_text()


@dataclass(frozen=True)
class Arm:
    label: str
    apart: bool  # a launch of its own before the product's: the stand-in's or the stream's
    engine: bool = False  # the product: the engine's gemv_int8 (else the probe's)
    stage: int = 1  # staged_weights.cu's STAGE: 0 rows loaded after the wait
    xt: int = 2  # threads rounding a block of x
    norm: bool = False  # the AddNorm epilogue
    stream: bool = False  # the feed-forward's down phase stands before the product, not the spin

    @property
    def mode(self) -> int:
        return (3 if self.apart else 2) if self.stream else (1 if self.apart else 0)


ARMS = [Arm("apart, engine", True, engine=True), Arm("one launch, staged", False),
        Arm("one launch, staged, xt 1", False, xt=1),
        Arm("one launch, after", False, stage=0)]
NORM_ARMS = [Arm("apart, engine + norm", True, engine=True, norm=True),
             Arm("apart, probe + norm", True, norm=True),
             Arm("one launch, staged + norm", False, norm=True),
             Arm("one launch, after + norm", False, stage=0, norm=True)]
STREAM_ARMS = [Arm("stream apart, engine", True, engine=True, stream=True),
               Arm("stream, staged during it", False, stage=2, stream=True),
               Arm("stream, staged after it", False, stage=3, stream=True),
               Arm("stream, after the count", False, stage=0, stream=True)]
STREAM_BYTES = 33 << 20  # ~the down phase's weight (4096x14336 Q4_0)


@cache
def probe_kernel() -> Any:
    shared = ROWS * K // 32 * 18 + K + 2 * 4 * (K // 32)  # rows, x as int8, its d and sums
    return mx.fast.cuda_kernel(
        name="vx_staged", input_names=["y", "w", "counts", "resid", "nw", "partials", "big"],
        output_names=["out", "normed", "x", "times"], source=SOURCE, header=HEADER,
        shared_memory=shared)


@dataclass
class Layer:
    """One layer's operands; ``counts`` keyed by (mode, norm): the launches sharing one must
    all take the same tickets (see staged_weights.cu); ``big``: the stream's bytes."""
    w: mx.array
    nw: mx.array
    counts: dict[tuple[int, bool], mx.array]
    partials: mx.array
    big: mx.array


def probe(y: mx.array, resid: mx.array, op: Layer, arm: Arm, spin_ns: int) -> tuple[mx.array, ...]:
    """The probe's launch: (out or h, normed, its timers uint64 [CTAs, 6])."""
    mode = arm.mode
    rows = op.w.shape[0]
    ctas = rows // ROWS + (PRODUCERS if mode == 0 else 0)
    out, normed, x, times = probe_kernel()(
        inputs=[y, op.w, op.counts[mode, arm.norm], resid, op.nw, op.partials, op.big],
        template=[("MODE", mode), ("STAGE", arm.stage), ("PRODUCERS", PRODUCERS),
                  ("SPIN_NS", spin_ns), ("ROWS", ROWS), ("N", rows),
                  ("XT", arm.xt), ("NORM", arm.norm)],
        grid=(ctas * THREADS, 1, 1), threadgroup=(THREADS, 1, 1),
        output_shapes=[(1, rows), (1, rows), (1, K), (ctas, 7)],
        output_dtypes=[mx.bfloat16, mx.bfloat16, mx.bfloat16, mx.uint64])
    return (x if mode == 3 else out), normed, times


STAND_IN: Any = _STAND_IN  # l2_prefetch.cu's kernel: spins, copies y to x


def stand_in(y: mx.array, w: mx.array, spin_ns: int) -> mx.array:
    (x,) = STAND_IN(inputs=[y, w], template=[("PREFETCH", False), ("SPIN_NS", spin_ns),
                                             ("PREFIX", 0), ("PIECE", 1 << 16), ("K", K)],
                    grid=(PRODUCERS * THREADS, 1, 1), threadgroup=(THREADS, 1, 1),
                    output_shapes=[(1, K)], output_dtypes=[mx.bfloat16])
    return x


def layer(arm: Arm, y: mx.array, resid: mx.array, op: Layer, spin_ns: int,
          scratch: mx.array) -> tuple[mx.array, mx.array | None, mx.array | None]:
    """(out or h, normed, the probe's timers) of one layer."""
    if arm.stream and arm.apart:  # the stream's launch, then the product's
        x = probe(y, resid, op, arm, 0)[0]
    else:
        x = stand_in(y, op.w, spin_ns) if arm.apart else y
    if arm.engine and arm.norm:
        h, normed = library("cuda").gemv_add_norm(x, op.w, Q4_0, resid, op.nw, EPS, scratch,
                                                  packed=True)
        return h, normed, None
    if arm.engine:
        return library("cuda").gemv(x, op.w, Q4_0, packed=True), None, None
    out, normed, times = probe(x, resid, op, arm, 0 if arm.apart else spin_ns)
    return out, (normed if arm.norm else None), (None if arm.apart else times)


def check(op: Layer, scratch: mx.array) -> None:
    """The probe's outputs against the engine's on one input. Both round x to int8 blocks the
    same way and sum exact integers, so the products differ only in float32's order of adding
    the blocks' scaled sums, then by one bf16 rounding of the output (h, normed: one more each):
    a few bf16 steps (2^-8 relative) of the largest value at most."""
    y = (mx.random.normal((1, K)) * 0.5).astype(mx.bfloat16)
    rows = op.w.shape[0]
    resid = mx.random.normal((1, rows)).astype(mx.bfloat16)
    ref = library("cuda").gemv(y, op.w, Q4_0, packed=True)
    refs = [ref] + (list(library("cuda").gemv_add_norm(y, op.w, Q4_0, resid, op.nw, EPS, scratch,
                                                       packed=True)) if rows == K else [])
    for arm in [Arm("alone", True), Arm("one launch, staged", False),
                Arm("one launch, after", False, stage=0),
                Arm("stream, staged during it", False, stage=2, stream=True),
                Arm("stream, staged after it", False, stage=3, stream=True),
                Arm("stream, after the count", False, stage=0, stream=True)] + (
            [Arm("alone + norm", True, norm=True), Arm("one launch + norm", False, norm=True)]
            if rows == K else []):
        out, normed, _ = probe(y, resid, op, arm, 1000)
        pairs = [(out, refs[0])] if not arm.norm else [(out, refs[1]), (normed, refs[2])]
        errs = [relative_error(got, want) for got, want in pairs]
        verdict = "ok" if max(errs) <= 2**-6 else "MISMATCH"
        print(f"check {arm.label}: max |probe - engine| / max |engine| "
              f"{', '.join(f'{e:.2e}' for e in errs)} {verdict}", flush=True)


def time_arm(arm: Arm, ops: list[Layer], spin_ns: int, layers: int,
             scratch: mx.array) -> str:
    rows = ops[0].w.shape[0]
    y = (mx.random.normal((1, K)) * 0.5).astype(mx.bfloat16)
    resid = mx.random.normal((1, rows)).astype(mx.bfloat16)
    timers: list[mx.array] = []

    def run(n: int) -> None:
        nonlocal y, resid
        timers.clear()
        for i in range(n):
            out, normed, t = layer(arm, y, resid, ops[i % len(ops)], spin_ns, scratch)
            if normed is not None:  # the engine's chain: h the next residual, normed the input
                y, resid = normed, out
            else:  # keep the chain's values finite: the next input is this output, scaled
                y = (out[:, :K] * (0.5 / mx.maximum(mx.abs(out).max(), 1e-3))).astype(
                    mx.bfloat16)
            if t is not None:
                timers.append(t)
        mx.eval(y, resid, timers)

    run(4)
    spans = [s for s in cupti_spans(lambda: run(layers))
             if any(k in s[2] for k in ("vx_stand_in", "vx_gemv", "vx_staged"))]
    # a layer: from its first kernel's start to its product's end (the normalizing ops between
    # layers are not counted)
    cells = [f"layer {median_group_span(spans, 2 if arm.apart else 1):5.1f} us"]
    for kind in ("vx_stand_in", "vx_gemv", "vx_staged"):
        d = sorted(b - a for a, b, name, _ in spans if kind in name)
        if d:
            cells.append(f"{kind.removeprefix('vx_')} {statistics.median(d):5.1f}")
    if timers:
        marks: list[list[float]] = [[], [], [], [], []]  # seen, rounded, summed, end; staged
        counted: list[float] = []
        for t in timers:
            v: list[list[int]] = t.tolist()  # type: ignore[assignment]
            start = min(row[0] for row in v)
            if arm.stream:  # the last CTA to count itself after its stream
                mine = v
                release = max(row[6] for row in v)
            else:
                mine = v[PRODUCERS:]
                release = max(v[p][1] for p in range(PRODUCERS))
            for i, col in enumerate((2, 3, 4)):
                marks[i].append(statistics.median([row[col] for row in mine]) - release)
            marks[3].append(max(row[5] for row in mine) - release)
            marks[4].append(max(row[1] for row in mine) - start)
            counted.append(release - start)
        seen, rounded, summed, end, staged = (statistics.median(m) / 1e3 for m in marks)
        release_at = statistics.median(counted) / 1e3
        cells.append(f"from release: seen {seen:4.2f}, rounded {rounded:4.2f}, summed "
                     f"{summed:4.2f}, last end {end:4.2f}; staged by {staged:5.2f} from start"
                     + (f"; last count {release_at:5.2f} from start" if arm.stream else ""))
    return "   ".join(cells)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--layers", type=int, default=48, help="layers timed per arm and round")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--spin", default="10", help="the stand-in's spin times, us")
    ap.add_argument("--shapes", default=",".join(SHAPES))
    ap.add_argument("--arms", default="spin,norm,stream",
                    help="groups of arms: spin (the stand-in before the product), norm (the "
                    "same with the AddNorm epilogue, output shape only), stream")
    a = ap.parse_args()
    if not on_cuda():
        sys.exit("staged_weights.py needs MLX's CUDA backend")
    scratch = add_norm_scratch()
    for name in a.shapes.split(","):
        rows = SHAPES[name]
        w = pack_q4_0(random_blocks(Q4_0, rows, K))
        nw = (1 + 0.1 * mx.random.normal((rows,))).astype(mx.bfloat16)
        counts = {(mode, norm): mx.zeros((128,), dtype=mx.uint32)
                  for mode in range(4) for norm in (False, True)}
        partials = mx.zeros((rows // ROWS,), dtype=mx.float32)
        big = mx.random.randint(0, 256, (STREAM_BYTES,), dtype=mx.uint8)
        first = Layer(w, nw, counts, partials, big)
        ops = [first] + [Layer(fresh_copy(w), nw, counts, partials, fresh_copy(big))
                         for _ in range(int(-(-NOT_IN_L2 // w.nbytes)) - 1)]
        mx.eval([(op.w, op.big) for op in ops], nw, list(counts.values()), partials)
        print(f"{name}: {len(ops)} weight copies of {w.nbytes / 1e6:.1f} MB; {PRODUCERS} "
              f"producer CTAs, {rows // ROWS} product CTAs", flush=True)
        check(first, scratch)
        for spin in (int(float(s) * 1000) for s in a.spin.split(",")):
            print(f"stand-in spinning {spin / 1e3:g} us; medians of {a.layers} layers; "
                  "the probe's timers in us from the producers' release (CTAs' median, the "
                  "last end's max)", flush=True)
            for _ in range(a.rounds):
                groups = {"spin": ARMS, "norm": NORM_ARMS if rows == K else [],
                          "stream": STREAM_ARMS}
                for arm in [arm for g in a.arms.split(",") for arm in groups[g]]:
                    print(f"  {arm.label:26s} {time_arm(arm, ops, spin, a.layers, scratch)}",
                          flush=True)


if __name__ == "__main__":
    main()
