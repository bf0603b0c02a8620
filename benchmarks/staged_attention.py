"""One request's paged decode and its output product + AddNorm in one launch, the output rows
staged in shared memory while the attention runs, against the engine's two launches (GPU
machine; an experiment for the decode step's 600 tok/s goal, not a part of the engine yet).

    python benchmarks/staged_attention.py [--layers 48] [--rounds 2] [--contexts 128,256,384]

benchmarks/staged_weights.py measured the idea with a stand-in for the attention (8 CTAs
spinning): one launch 3.0-3.4 us shorter than two. Here the attention is the engine's own
(`vxa::paged_decode`, told its CTA count through the macro VXA_CTAS; calls G-K passed it as a
parameter, which the engine's kernel took then), Llama-3-8B's shapes (32 query heads of 128
over 8 KV heads, bf16, blocks of 16 tokens, one sequence), the output weight packed Q4_0
4096x4096, the norm's eps 1e-5. The layers cycle through 8 pools and through
weight copies that never sit in L2 together; the chain is the engine's: the next layer's q is
this one's normed output, its residual this one's h. First a check of one layer against the
engine's launches (`kernels.paged_decode`, then `gemv_add_norm`): the attention's output the
same bits, h and normed within a few bf16 steps (the products add the same integers in another
order). Then per context, the arms alternated: the median layer by CUPTI (first kernel's start
to last one's end: the gap between the engine's two launches included, as in its step).

Session 51 (H200, calls G-K; notes/gpu-kernels.md): at 128 tokens the staged launch is level
with the engine's two (16.3-17.3 against 16.4-16.5 us a layer), 0.9-1.5 us slower at 256-384:
the staging lengthens the attention by 0.5-1.4 us whether begun late or paced, and the product
gains 3.5. Session 52 (calls A-C): the evict-first arm's cp.async form stopped the GPU with an
illegal instruction, so it stages through registers (ARMS[8]; ARMS[9] the same loads unmarked).
With the hint the attention keeps its pace and the launch is 15.4 us against the engine's
16.8-16.9 at 128 tokens, 18.0-18.1 against 18.9 at 256; unmarked, 16.6-16.7 and 19.4-19.5.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from functools import cache
from pathlib import Path
from typing import Any

import mlx.core as mx
from gguf import GGMLQuantizationType

sys.path.insert(0, str(Path(__file__).parent))
from gpu_timeline import cupti_spans, median_group_span  # noqa: E402
from kernels import NOT_IN_L2, fresh_copy, random_blocks, relative_error  # noqa: E402

from vexel_core.attention import kernels as attention  # noqa: E402
from vexel_core.gpu import cuda_header, float_constant, on_cuda  # noqa: E402
from vexel_core.quant.kernels import library  # noqa: E402
from vexel_core.quant.kernels.library import add_norm_scratch  # noqa: E402
from vexel_core.quant.kernels.packed import pack_q4_0  # noqa: E402

Q4_0 = GGMLQuantizationType.Q4_0
HQ, HKV, D, BS, EPS = 32, 8, 128, 16, 1e-5  # Llama-3-8B's attention; the pool's block size
N = K = HQ * D  # the output product: 4096 x 4096
SMS, ROW_BYTES = 132, K // 32 * 18  # the H200's SMs: one CTA an SM
POOLS = 8  # layers' pools cycled through
HERE = Path(__file__).parent


@cache
def fused_kernel(shared: int, attn: int) -> Any:
    """The probe's kernel for *attn* attention CTAs: paged_decode_kernel.cuh takes its CTA count
    from the macro VXA_CTAS (a literal here, as the grid's count is to the engine's kernel), so
    each count is a kernel of its own name (MLX keeps compiled kernels by name)."""
    cuda = attention._HERE / "cuda"
    header = (f"#define VXA_CTA blockIdx.x\n#define VXA_CTAS {attn}\n"
              + cuda_header([cuda / f"{h}.cuh" for h in attention.HEADERS]
                            + [HERE / "staged_common.cuh"]))
    return mx.fast.cuda_kernel(
        f"vx_staged_attention_{attn}",
        [*attention._INPUTS, "w", "resid", "nw", "eps", "scratch"],
        ["out", "part", "done", "h", "normed", "times"],
        (HERE / "staged_attention.cu").read_text(),
        header, ensure_row_contiguous=False, shared_memory=shared)


def scratch_for(products: int) -> mx.array:
    scratch = mx.zeros((2 + max(products, 8),), dtype=mx.uint32)
    mx.eval(scratch)
    return scratch


@cache
def fused_scratch(products: int) -> mx.array:
    return scratch_for(products)


def fused(q: mx.array, pool: tuple[mx.array, ...], w: mx.array, resid: mx.array,
          nw: mx.array, ctx: int, stage: bool = True, sleep_ns: int = 0, delay_ns: int = 0,
          pace_ns: int = 0, evict: int = 0) -> tuple[mx.array, ...]:
    """(attention output, h, normed, timers) of one layer in one launch."""
    k_pool, v_pool, tables, ctx_lens = pool
    warps, splits = attention.launch_shape(1, HKV, ctx, D, HQ // HKV, q.dtype)
    plan = attention._plan(1, HQ, HKV, D, q.dtype, BS, warps, splits, False, True, D**-0.5, 0.0,
                           0, (0, False, 0.0, 1.0), (0, 0), "cuda")
    attn = HKV * splits
    products = SMS - attn
    per = -(-N // products)
    assert per <= 64, "staged_attention.cu keeps at most 64 rows' residuals a CTA"
    freqs, after, k_new, v_new, new_slots = attention._placeholders(q.dtype)
    ctas = attn + products
    out, _, _, h, normed, times = fused_kernel(per * ROW_BYTES + K + 8 * (K // 32), attn)(
        inputs=[q, k_pool, v_pool, tables, ctx_lens, *plan.params, freqs,
                attention._counters(HKV), after, k_new, v_new, new_slots, w, resid, nw,
                float_constant(EPS), fused_scratch(products)],
        template=[*plan.template, ("ATTN", attn), ("STAGE", stage), ("SLEEP", sleep_ns),
                  ("DELAY", delay_ns), ("PACE", pace_ns), ("EVICT", evict)],
        grid=(ctas * warps * 32, 1, 1), threadgroup=(warps * 32, 1, 1),
        output_shapes=[*plan.output_shapes, (1, N), (1, N), (ctas, 4)],
        output_dtypes=[*plan.output_dtypes, q.dtype, q.dtype, mx.uint64])
    return out, h, normed, times


def apart(q: mx.array, pool: tuple[mx.array, ...], w: mx.array, resid: mx.array, nw: mx.array,
          ctx: int, scratch: mx.array) -> tuple[mx.array, mx.array, mx.array]:
    """The same as the engine launches it: the paged decode, then gemv_int8's AddNorm."""
    k_pool, v_pool, tables, ctx_lens = pool
    out = attention.paged_decode(q, k_pool, v_pool, tables, ctx_lens, block_size=BS,
                                 scale=D**-0.5, backend="cuda", max_context=ctx)
    h, normed = library("cuda").gemv_add_norm(out.reshape(1, N), w, Q4_0, resid, nw, EPS,
                                              scratch, packed=True)
    return out, h, normed


def make_pool(ctx: int) -> tuple[mx.array, ...]:
    """A layer's pools holding one sequence of *ctx* tokens in shuffled blocks, its table and
    its context length (views into 8-element arrays: out of MLX's small pool, gpu.TOKEN_SHAPE)."""
    blocks = -(-ctx // BS) + 2
    k_pool = (mx.random.normal((blocks * BS, HKV, D)) * 0.5).astype(mx.bfloat16)
    v_pool = mx.random.normal((blocks * BS, HKV, D)).astype(mx.bfloat16)
    order = mx.random.permutation(blocks)[: -(-ctx // BS)].astype(mx.int32)
    tables = mx.concatenate([order, mx.zeros((8,), mx.int32)])[None, : max(order.size, 8)]
    ctx_lens = mx.full((8,), ctx, dtype=mx.int32)[:1]
    return k_pool, v_pool, tables, ctx_lens


def check(pool: tuple[mx.array, ...], w: mx.array, nw: mx.array, ctx: int) -> None:
    q = mx.random.normal((1, HQ, D)).astype(mx.bfloat16)
    resid = mx.random.normal((1, N)).astype(mx.bfloat16)
    want = apart(q, pool, w, resid, nw, ctx, add_norm_scratch())
    mx.eval(want)
    got = fused(q, pool, w, resid, nw, ctx)[:3]
    mx.eval(got)
    same = mx.array_equal(got[0], want[0]).item()
    errs = [relative_error(g, r) for g, r in zip(got[1:], want[1:], strict=True)]
    ok = same and max(errs) <= 2**-6
    print(f"check, {ctx} tokens: attention {'the same bits' if same else 'DIFFERS'}; max |fused - "
          f"engine| / max |engine|: h {errs[0]:.2e}, normed {errs[1]:.2e} "
          f"{'ok' if ok else 'MISMATCH'}", flush=True)


# (label, one launch, rows staged before the wait, ns slept between polls, ns before staging,
# ns between a CTA's rounds of copies, EVICT: 0 cp.async, 1 registers marked evict-first in L2,
# 2 registers unmarked)
Arm = tuple[str, bool, bool, int, int, int, int]
ARMS: list[Arm] = [
    ("two launches (engine)", False, True, 0, 0, 0, 0),
    ("one launch, rows staged", True, True, 0, 0, 0, 0),
    ("one launch, rows after", True, False, 0, 0, 0, 0),
    ("one launch, staged, polls 200 ns apart", True, True, 200, 0, 0, 0),
    ("one launch, staged from 2 us", True, True, 0, 2000, 0, 0),
    ("one launch, staged from 4 us", True, True, 0, 4000, 0, 0),
    ("one launch, staged, rounds 250 ns apart", True, True, 0, 0, 250, 0),
    ("one launch, staged, rounds 500 ns apart", True, True, 0, 0, 500, 0),
    ("one launch, staged evict-first (regs)", True, True, 0, 0, 0, 1),
    ("one launch, staged by registers", True, True, 0, 0, 0, 2)]


def time_arm(arm: Arm, pools: list[tuple[mx.array, ...]],
             weights: list[mx.array], nw: mx.array, ctx: int, layers: int,
             scratch: mx.array) -> str:
    _, one_launch, stage, sleep_ns, delay_ns, pace_ns, evict = arm
    q = mx.random.normal((1, HQ, D)).astype(mx.bfloat16)
    resid = mx.random.normal((1, N)).astype(mx.bfloat16)
    timers: list[mx.array] = []

    def run(n: int) -> None:
        nonlocal q, resid
        timers.clear()
        for i in range(n):
            pool, w = pools[i % len(pools)], weights[i % len(weights)]
            if one_launch:
                _, h, normed, t = fused(q, pool, w, resid, nw, ctx, stage, sleep_ns, delay_ns,
                                      pace_ns, evict)
                timers.append(t)
            else:
                _, h, normed = apart(q, pool, w, resid, nw, ctx, scratch)
            q, resid = normed.reshape(1, HQ, D), h
        mx.eval(q, resid, timers)

    run(4)
    spans = [s for s in cupti_spans(lambda: run(layers))
             if any(k in s[2] for k in ("vx_paged_decode", "vx_gemv", "vx_staged_attention"))]
    n = 1 if one_launch else 2
    cells = [f"layer {median_group_span(spans, n):5.1f} us"]
    if not one_launch:
        d = [b - a for a, b, name, _ in spans if "vx_paged_decode" in name]
        cells.append(f"paged decode {statistics.median(d):5.1f}")
    else:
        attn, seen, landed, end = [], [], [], []
        ctas = HKV * attention.launch_shape(1, HKV, ctx, D, HQ // HKV, mx.bfloat16)[1]
        for t in timers:
            v: list[list[int]] = t.tolist()  # type: ignore[assignment]
            start, done = min(r[0] for r in v), max(r[1] for r in v[:ctas])
            attn.append(done - start)
            seen.append(statistics.median([r[1] for r in v[ctas:]]) - done)
            landed.append(statistics.median([r[2] for r in v[ctas:]]) - done)
            end.append(max(r[3] for r in v[ctas:]) - done)
        cells.append(f"attention CTAs done {statistics.median(attn) / 1e3:5.2f} from the start; "
                     f"then x seen {statistics.median(seen) / 1e3:4.2f}, rows landed "
                     f"{statistics.median(landed) / 1e3:4.2f}, products summed "
                     f"{statistics.median(end) / 1e3:4.2f} (last)")
    return "   ".join(cells)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--layers", type=int, default=48, help="layers timed per arm and round")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--contexts", default="128,256,384")
    ap.add_argument("--arms", default="", help="the arms to run, by their places in ARMS "
                    "(default: all), e.g. 0,1,6,7")
    a = ap.parse_args()
    if not on_cuda():
        sys.exit("staged_attention.py needs MLX's CUDA backend")
    w = pack_q4_0(random_blocks(Q4_0, N, K))
    weights = [w] + [fresh_copy(w) for _ in range(int(-(-NOT_IN_L2 // w.nbytes)) - 1)]
    nw = (1 + 0.1 * mx.random.normal((N,))).astype(mx.bfloat16)
    scratch = add_norm_scratch()
    mx.eval(weights, nw)
    for ctx in (int(c) for c in a.contexts.split(",")):
        pools = [make_pool(ctx) for _ in range(POOLS)]
        mx.eval(pools)
        warps, splits = attention.launch_shape(1, HKV, ctx, D, HQ // HKV, mx.bfloat16)
        print(f"{ctx} tokens: the paged decode in {HKV * splits} CTAs of {warps} warps, the "
              f"product in {SMS - HKV * splits}", flush=True)
        check(pools[0], w, nw, ctx)
        for _ in range(a.rounds):
            for arm in [ARMS[int(i)] for i in a.arms.split(",")] if a.arms else ARMS:
                print(f"  {arm[0]:38s} {time_arm(arm, pools, weights, nw, ctx, a.layers, scratch)}",
                      flush=True)


if __name__ == "__main__":
    main()
