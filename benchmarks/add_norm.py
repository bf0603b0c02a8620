"""gemv_int8's AddNorm epilogue beside what it replaces (GPU machine): kernel durations by
CUPTI (PyTorch's profiler, as benchmarks/gpu_timeline.py), one bf16 row of Q4_0 repacked, as
a Llama-3-8B layer's output product (4096x4096) and down product (4096x14336) run:

    python benchmarks/add_norm.py [--launches 64]

Per shape, three arms, each launch evaluated alone (two in flight could share the GPU; MLX's
CUDA graphs follow the data), through weight copies that together pass L2:

* ``plain``: the product alone (``gemv_int8``);
* ``separate``: the product, then ``add_rms_norm`` (main's engine);
* ``fused``: ``gemv_add_norm``, each launch adding into the residual the last one wrote.

Prints each kernel's median, p10 and p90 duration per arm. ``--untimed`` runs the same
launches without CUPTI, for Nsight Compute (which cannot share the GPU's counters with it):

    ncu --clock-control none --set full -k regex:gemv_int8_norm --launch-skip 3 -c 1 -o fused \\
        python3 benchmarks/add_norm.py --launches 4 --untimed
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

_CUDA = Path(sys.modules[library.__module__].__file__ or "").parent / "cuda"

Q4_0 = GGMLQuantizationType.Q4_0
SHAPES = {"output 4096x4096": (4096, 4096), "down 4096x14336": (4096, 14336)}
ARMS = ("plain", "separate", "fused")
EPS = 1e-5


def inputs(rows: int, cols: int) -> tuple[list[mx.array], mx.array, mx.array, mx.array]:
    """Copies of one random Q4_0 weight (repacked) that together pass L2, and bf16 x, residual
    and norm weight for it, evaluated."""
    one = pack_q4_0(random_blocks(Q4_0, rows, cols))
    copies = [one] + [fresh_copy(one) for _ in range(math.ceil(NOT_IN_L2 / one.nbytes) - 1)]
    x = (mx.random.normal((1, cols)) * 0.1).astype(mx.bfloat16)
    residual = mx.random.normal((1, rows)).astype(mx.bfloat16)
    weight = (1 + 0.1 * mx.random.normal((rows,))).astype(mx.bfloat16)
    mx.eval(copies, x, residual, weight)
    return copies, x, residual, weight


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


# Bodies that take the fused launch apart (--variants), given eps as a 4-byte array (in MLX's
# small pool of managed memory, as gpu.float_constant made it before session 21): which part
# of the fused launch cost its ~20 us. Session 21 (H200): fused 23.0, eps-literal 9.0,
# no-finish 6.3 (eps is never read), plain-body 6.0, plain-eps 22.2: the eps read.
_EPILOGUE = "vx::AddNorm<T> e{{residual, nw, {eps}, h, normed, const_cast<uint32_t*>(scratch)}};"
_PRODUCT = ("vx::gemv_int8<GGML_TYPE, T, WARPS, STAGES, PER_LANE, KCAP, XREG, 0, XPRE>"
            "(w, x, {y}, w_shape[0], w_shape[1]);")
VARIANTS = {
    "fused": None,  # the library's own kernel (its eps: gpu.float_constant's 16 bytes)
    "fused-eps4": (_CUDA / "gemv_int8_norm.cu").read_text(),
    "eps-literal": _EPILOGUE.format(eps="1e-5f") + _PRODUCT.format(y="&e")
                   + "vx::add_norm_finish<WARPS>(e, w_shape[0]);",
    "no-finish": _EPILOGUE.format(eps="eps[0]") + _PRODUCT.format(y="&e")
                 + "if (e.ss == 12345.f) normed[0] = h[0];",
    "plain-body": _PRODUCT.format(y="h"),
    "plain-eps": "if (eps[0] == 12345.f) return;" + _PRODUCT.format(y="h"),
}


def run_variants(launches: int) -> None:
    """Each VARIANTS body on the output product's shape, timed as the arms are."""
    from vexel_core.quant.kernels.library import (  # noqa: PLC0415
        _INPUTS,
        _OUTPUTS,
        _add_norm_launch,
        kernel_source,
    )
    lib = library("cuda")
    copies, x, residual, weight = inputs(*SHAPES["output 4096x4096"])
    eps4 = mx.array([EPS], dtype=mx.float32)
    scratch = add_norm_scratch()
    mx.eval(eps4)
    launch = _add_norm_launch("cuda", Q4_0, copies[0].shape, copies[0].dtype, x.shape, x.dtype,
                              None, True)
    header, _ = kernel_source("cuda", "gemv_int8_norm")
    for name, body in VARIANTS.items():
        kernel = (None if body is None else mx.fast.cuda_kernel(
            f"vx_variant_{name.replace('-', '_')}", _INPUTS["gemv_int8_norm"],
            _OUTPUTS["gemv_int8_norm"], body, header, shared_memory=launch.shared))

        def run(n: int, kernel=kernel) -> None:
            r = residual
            for i in range(n):
                raw = copies[i % len(copies)]
                if kernel is None:
                    r, normed = lib.gemv_add_norm(x, raw, Q4_0, r, weight, EPS, scratch,
                                                  packed=True)
                else:
                    r, normed = kernel(
                        inputs=[raw, x, r, weight, eps4, scratch], template=launch.template,
                        grid=launch.grid, threadgroup=launch.threadgroup,
                        output_shapes=[launch.shape, launch.shape],
                        output_dtypes=[x.dtype, x.dtype])
                mx.eval(r, normed)

        run(2)
        spans = cupti_spans(partial(run, launches))
        d = sorted(b - a for a, b, kname, _ in spans if "vx_" in kname)
        print(f"  {name:12s} {len(d):4d} x median {statistics.median(d):6.1f} us "
              f"(p10 {d[len(d) // 10]:.1f}, p90 {d[len(d) * 9 // 10]:.1f})")
        sys.stdout.flush()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--launches", type=int, default=64)
    ap.add_argument("--untimed", action="store_true", help="no CUPTI (for Nsight Compute)")
    ap.add_argument("--variants", action="store_true",
                    help="time the fused launch's parts instead (VARIANTS)")
    args = ap.parse_args()
    if args.variants:
        run_variants(args.launches)
        return
    for label, (rows, cols) in SHAPES.items():
        copies, x, residual, weight = inputs(rows, cols)
        scratch = add_norm_scratch()
        print(f"== {label}: {len(copies)} weight copies, {args.launches} launches an arm")
        for arm in ARMS:
            run_arm(arm, copies, x, residual, weight, scratch, 2)  # NVRTC compiles here
            if args.untimed:
                run_arm(arm, copies, x, residual, weight, scratch, args.launches)
                continue
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
