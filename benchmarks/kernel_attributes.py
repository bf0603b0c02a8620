"""Can a kernel made by ``mx.fast.cuda_kernel`` carry compile-time launch attributes? (GPU
machine; a fact for the kernels' design, not a part of the engine.)

    python benchmarks/kernel_attributes.py [--ctas 16] [--chain 4]

``mx.fast.cuda_kernel`` takes no cluster shape, launch bounds or launch attributes: MLX 0.32
writes the kernel's signature as ``__global__ void name(...)`` after the caller's header and
launches it as a plain CUDA graph node (``CommandEncoder::add_kernel_node_raw`` with no
cluster). But ``__global__`` is a macro of CUDA's own headers (``__location__(global)``), so a
header may redefine it with attributes that ptxas and the driver honour without any launch
parameter: ``__cluster_dims__`` (a thread block cluster, Hopper's distributed shared memory)
and ``__launch_bounds__`` (a register budget for the block size). nvcc 13 for sm_90 writes
them into the PTX as ``.reqnctapercluster`` and ``.maxntid``/``.minnctapersm``.

This probe launches a kernel with ``__cluster_dims__(2, 1, 1)`` and ``__launch_bounds__`` from
the header, ``--chain`` times in one evaluation (MLX's CUDA graph), and checks what each CTA
saw: its partner's value through distributed shared memory, its cluster rank and the
cluster's size. It exits 1 when any CTA saw anything else. Programmatic dependent launch is
not among what this can give: it is an attribute of a launch (of a graph edge), not of a
kernel.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import mlx.core as mx

from vexel_core.gpu import on_cuda

CLUSTER, THREADS = 2, 128

# The generated signature's __global__, given the attributes (nothing follows the header but
# that kernel, so the redefinition touches nothing else).
HEADER = f"""
#undef __global__
#define __global__ __location__(global) __cluster_dims__({CLUSTER}, 1, 1) \\
    __launch_bounds__({THREADS}, 1)
"""

PROBE = mx.fast.cuda_kernel(
    name="vx_cluster_probe", input_names=["x"], output_names=["out"], header=HEADER,
    source=(Path(__file__).parent / "kernel_attributes.cu").read_text())


def seen(x: mx.array) -> mx.array:
    """[CTAs, 3]: each CTA's partner value, cluster rank and cluster size."""
    (out,) = PROBE(inputs=[x], grid=(x.size * THREADS, 1, 1), threadgroup=(THREADS, 1, 1),
                   output_shapes=[(x.size, 3)], output_dtypes=[mx.float32])
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ctas", type=int, default=16, help="CTAs a launch (even)")
    parser.add_argument("--chain", type=int, default=4, help="launches in one evaluation")
    args = parser.parse_args()
    if not on_cuda():
        print("kernel_attributes.py needs MLX's CUDA backend", file=sys.stderr)
        return 2
    if args.ctas < CLUSTER or args.ctas % CLUSTER:
        parser.error(f"--ctas must be a positive multiple of the cluster size {CLUSTER}")
    x = mx.arange(args.ctas, dtype=mx.float32)
    outs = []
    for _ in range(args.chain):  # each launch's input is the last one's partner values
        out = seen(x)
        outs.append((x, out))
        x = out[:, 0]
    mx.eval([o for _, o in outs])
    failures = 0
    for i, (given, out) in enumerate(outs):
        given_l: list[float] = given.tolist()  # type: ignore[assignment]
        rows: list[list[float]] = out.tolist()  # type: ignore[assignment]
        for b, (partner, rank, size) in enumerate(rows):
            want = (given_l[b ^ 1], float(b % CLUSTER), float(CLUSTER))
            if (partner, rank, size) != want:
                failures += 1
                print(f"launch {i} CTA {b}: saw (partner, rank, size) = "
                      f"{(partner, rank, size)}, expected {want}")
    print(f"{args.chain} launches x {args.ctas} CTAs with __cluster_dims__({CLUSTER}, 1, 1) and "
          f"__launch_bounds__({THREADS}, 1) from the header: "
          + ("every CTA saw its cluster" if failures == 0 else f"{failures} CTAs wrong"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
