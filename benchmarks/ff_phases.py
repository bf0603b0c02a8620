"""Where the one-launch feed-forward kernel's time goes (GPU machine): the kernel as the engine
runs it against copies of it with one part taken out, alternated in one process, a Llama-3-8B
block, packed Q4_0, bf16.

    python benchmarks/ff_phases.py [--rounds 3]

The parts (each a text change to cuda/feed_forward.cuh, compiled under its own kernel name):
* ``no wait``: no CTA waits for the count of done slices (the down rows may read values not
  yet written);
* ``no down rows``: the down product's loop runs no row (its values are still copied in);
* ``no prefetch``: no warp asks its first down row into L2 while its CTA waits;
* ``all rows prefetched``: every warp asks all of its down rows into L2 while it waits, not
  only the first.
The cuts' outputs are wrong: timing only. What a part costs is main's time less the copy's.
Session 35 wrote it for the kernel before session 36's (every CTA adding its share of every
down row into int64 sums); what it found there (the down loop ~15.5 us, its atomics the wall
once the loads are contiguous, the last CTA ~3.3) is in notes/gpu-kernels.md, session 35, and
its cuts in git (`git show 40bfbe8:benchmarks/ff_phases.py`).
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
    F,
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
PREFETCH = "for (int b = lane * 128; b < int(d_row); b += 32 * 128) prefetch_l2(row + b);"
CUTS = {
    "no wait": ("} while (done < uint32_t(SLICES) && claims >= uint32_t(SLICES));\n"
                "      unclaimed = done < uint32_t(SLICES) ? SLICES : -1;",
                "} while (false);\n      unclaimed = done + claims > 0 ? -1 : -1;"),
    "no down rows": ("for (int o = first_row; o < N;", "for (int o = first_row; o < 0;"),
    "no prefetch": (PREFETCH, ""),
    "all rows prefetched": (PREFETCH, (
        "for (int o = first_row; o < N; o += int(gridDim.x) * FF_WARPS) {\n"
        "      for (int b = lane * 128; b < int(d_row); b += 32 * 128) "
        "prefetch_l2(wd + o * d_row + b);\n    }")),
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
        scratch = feed_forward_scratch(F)

        def step(x: mx.array, resid: mx.array, w: Weights) -> tuple[mx.array, mx.array]:
            return lib.feed_forward(x, w[0], w[1], "silu", resid, nw, EPS, scratch)
        return chain(step, mx.random.normal((1, K)).astype(mx.bfloat16),
                     mx.random.normal((1, N)).astype(mx.bfloat16))

    time_arms([(tag, arm(lib)) for tag, lib in libraries], weights, args.rounds,
              wgu.nbytes + wd.nbytes)


if __name__ == "__main__":
    main()
