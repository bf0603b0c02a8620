"""Where the one-launch feed-forward kernel's time goes (GPU machine): the kernel as the engine
runs it against copies of it with one part taken out, alternated in one process, a Llama-3-8B
block, packed Q4_0, bf16.

    python benchmarks/ff_phases.py [--rounds 3]

The parts (each a text change to cuda/feed_forward.cuh, compiled under its own kernel name):
* ``no atomics``: the down sums computed but never added into the int64 accumulators (a store
  behind a condition that never holds keeps the arithmetic alive);
* ``u32 atomics``, ``f32 atomics``: 4-byte additions instead of the 8-byte fixed point (the
  cost of the atomics' width; f32's sums would depend on the CTAs' order);
* ``no down loop``: the down product's loop runs no pass (its first loads still fly);
* ``no last CTA``: every CTA returns after the down product (no count, no h, no norm);
* ``acq_rel count``, a variant rather than a cut (its outputs are main's): the count of
  finished CTAs as one acquire-release atomic (``atom.acq_rel.gpu``) instead of
  gemv_int8.cuh's ``last_of_grid``, two fences around a relaxed one; the AddNorm epilogue
  counts the same way, so both kernels' tails would gain.
The cuts' outputs are wrong: timing only. What a part costs is main's time less the copy's.
Session 35 wrote it when the down loads' pattern, 6.4 us alone (benchmarks/down_layout.py),
saved ~2 in the kernel; what it found (the down loop ~15.5 us, its atomics the wall once the
loads are contiguous, the last CTA ~3.3) is in notes/gpu-kernels.md, session 35.
Timed as feed_forward.py times (its helpers: CUPTI, a chain of blocks over weight copies not in
L2).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

import mlx.core as mx
from feed_forward import (  # benchmarks/feed_forward.py
    EPS,
    K,
    N,
    Run,
    Weights,
    block_weights,
    chain,
    time_arms,
    weight_copies,
)

from vexel_core.gpu import cuda_header, on_cuda
from vexel_core.quant.kernels import library
from vexel_core.quant.kernels.library import (
    _HEADERS,
    _HERE,
    _INPUTS,
    _OUTPUTS,
    KernelLibrary,
    feed_forward_scratch,
    kernel_source,
)

KERNEL = _HERE / "cuda" / "feed_forward.cuh"
ATOMIC = """        atomicAdd(reinterpret_cast<unsigned long long*>(sums) + row_of(r0, p),
                  static_cast<unsigned long long>(__float2ll_rn(v * 4294967296.0f)));"""
CUTS = {
    "no atomics": (ATOMIC, """        const long long s = __float2ll_rn(v * 4294967296.0f);
        if (s == 0x7FFFFFFFFFFFFFFLL) sums[row_of(r0, p)] = s;"""),
    "u32 atomics": (ATOMIC, "atomicAdd(reinterpret_cast<unsigned int*>(sums) + row_of(r0, p), "
                            "static_cast<unsigned int>(__float2int_rn(v * 65536.0f)));"),
    "f32 atomics": (ATOMIC, "atomicAdd(reinterpret_cast<float*>(sums) + row_of(r0, p), v);"),
    "no down loop": ("for (int r0 = first; r0 < N;", "for (int r0 = first; r0 < 0;"),
    "acq_rel count": ("if (!last_of_grid(count)) return;", """__shared__ bool last_by_count;
  if (threadIdx.x == 0) {
    unsigned before;
    asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;"
                 : "=r"(before) : "l"(count) : "memory");
    last_by_count = before == gridDim.x - 1;
  }
  __syncthreads();
  if (!last_by_count) return;"""),
    "no last CTA": ("if (!last_of_grid(count)) return;", "return;"),
}


class CutLibrary(KernelLibrary):
    """The CUDA library with feed_forward.cuh's text changed (*old* to *new*), each kernel
    compiled under a name of its own, ``vx_<op>_<tag>`` (MLX keeps compiled kernels by name)."""

    def __init__(self, tag: str, old: str, new: str, folder: Path) -> None:
        super().__init__("cuda")
        text = KERNEL.read_text()
        if text.count(old) != 1:
            sys.exit(f"ff_phases.py: {tag!r}: its text is not in feed_forward.cuh once")
        self._tag = tag.replace(" ", "_")
        cut = folder / f"feed_forward_{self._tag}.cuh"
        cut.write_text(text.replace(old, new))
        files = [_HERE / name for name in _HEADERS["cuda"]]
        self._header = cuda_header([cut if f.name == KERNEL.name else f for f in files])

    def _kernel(self, op: Any, shared: int) -> Any:
        if (op, shared) not in self._kernels:
            body = kernel_source("cuda", op)[1]
            self._kernels[op, shared] = mx.fast.cuda_kernel(
                f"vx_{op}_{self._tag}", _INPUTS[op], _OUTPUTS[op], body, self._header,
                shared_memory=shared)
        return self._kernels[op, shared]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if not on_cuda():
        sys.exit("ff_phases.py needs MLX's CUDA backend")
    wgu, wd, nw = block_weights()
    weights = weight_copies((wgu, wd))
    folder = Path(tempfile.mkdtemp(prefix="ff_phases_"))
    libraries = [("main", library("cuda"))]
    libraries += [(tag, CutLibrary(tag, old, new, folder)) for tag, (old, new) in CUTS.items()]

    def arm(lib: KernelLibrary) -> Run:
        scratch = feed_forward_scratch(N)

        def step(x: mx.array, resid: mx.array, w: Weights) -> tuple[mx.array, mx.array]:
            return lib.feed_forward(x, w[0], w[1], "silu", resid, nw, EPS, scratch)
        return chain(step, mx.random.normal((1, K)).astype(mx.bfloat16),
                     mx.random.normal((1, N)).astype(mx.bfloat16))

    time_arms([(tag, arm(lib)) for tag, lib in libraries], weights, args.rounds,
              wgu.nbytes + wd.nbytes)


if __name__ == "__main__":
    main()
