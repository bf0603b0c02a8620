"""Would a down matrix laid out by the feed-forward kernel's CTAs read faster? (GPU machine.)

    python benchmarks/down_layout.py [--rounds 3]

The feed-forward kernel (cuda/feed_forward.cuh) spends ~15 of its ~38 us a Llama-3-8B block
in the down phase, 33 MB at ~2.2 TB/s, where its gate/up phase reads at ~4.7 (session 27's
phase timer). There each CTA reads 32 bytes of quants and 4 of scales from each of the 4,096
rows, 8,064 bytes apart: short, scattered reads. This times `down_layout.cu`, the down phase's
loads alone (the same grid, lanes, rows in flight and row order, no arithmetic), for 4 and 8
rows in flight a lane, four ways: the engine's; the engine's layout read 64 bytes a row by
CTA pairs, each half the rows (what pairs exchanging their slices through memory would
read); the same by one CTA a pair, every row (what the pair's second to finish would read,
doing the down product for both: no CTA waits for another); the same blocks regrouped so
that each CTA's are contiguous. If a way takes about half the engine's time, the down phase's
time is its access pattern: the pairs need no new layout; the regrouping a load-time repack
of the down matrices (and the kernels that read them otherwise: the batch products, the
dequantization).

Each launch is checked against numpy's XOR of the matrix; launches cycle through copies that
never sit in L2 together, timed by CUPTI (`gpu_timeline.cupti_spans`), the arms alternated.
Each launch is evaluated alone: launches of one evaluation that share no data run at the same
time in MLX's CUDA graph, and each then takes longer (session 34's first run, 48 launches an
evaluation: 131 us a launch of the engine's way, where the kernel's whole down phase takes ~15).
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

from vexel_core.gpu import on_cuda
from vexel_core.quant.kernels.packed import pack_q4_0

F, N = 14336, 4096  # Llama-3-8B: the down matrix is N rows of F columns
CTAS, THREADS, WARPS = F // 64, 256, 8
LAUNCHES = 48  # a timed run


def tiled(packed: np.ndarray) -> np.ndarray:
    """The packed rows' blocks regrouped by CTA: [F / 64][N][2][16] quants, then
    [F / 64][N][2] scales (down_layout.cu, TILED 1)."""
    sb = packed.reshape(N, F // 1024, 576)
    quants = sb[..., :512].reshape(N, F // 64, 2, 16).transpose(1, 0, 2, 3)
    scales = sb[..., 512:].reshape(N, F // 64, 2, 2).transpose(1, 0, 2, 3)
    return np.concatenate([quants.reshape(-1), scales.reshape(-1)])


def expected_xor(packed: np.ndarray) -> int:
    sb = packed.reshape(N, F // 1024, 576)
    quants = np.ascontiguousarray(sb[..., :512]).view(np.uint32)
    scales = np.ascontiguousarray(sb[..., 512:]).view(np.uint16).astype(np.uint32)
    return int(np.bitwise_xor.reduce(quants, axis=None) ^ np.bitwise_xor.reduce(scales, axis=None))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if not on_cuda():
        sys.exit("down_layout.py needs MLX's CUDA backend")
    kernel = mx.fast.cuda_kernel(
        name="vx_down_read", input_names=["w"], output_names=["out"],
        source=(Path(__file__).parent / "down_layout.cu").read_text())
    packed = np.array(pack_q4_0(random_blocks(Q.Q4_0, N, F)))
    want = expected_xor(packed)
    layouts = {0: mx.array(packed), 1: mx.array(tiled(packed))}  # by TILED
    copies = {i: [w] + [w + mx.zeros((), w.dtype)
                        for _ in range(int(-(-NOT_IN_L2 // w.nbytes)) - 1)]
              for i, w in layouts.items()}
    mx.eval(copies)

    def launch(w: mx.array, way: tuple[int, int, int], rows_in_flight: int) -> mx.array:
        is_tiled, bpr, g = way
        ctas = CTAS if bpr == 2 * g else CTAS // 2  # one CTA a pair: half the grid
        (out,) = kernel(inputs=[w], template=[("TILED", is_tiled), ("BPR", bpr), ("G", g),
                                              ("PASS", rows_in_flight), ("N", N), ("F", F)],
                        grid=(ctas * THREADS, 1, 1), threadgroup=(THREADS, 1, 1),
                        output_shapes=[(ctas * WARPS,)], output_dtypes=[mx.uint32])
        return out

    ways = {"rows (engine)": (0, 2, 1), "rows, CTA pairs": (0, 4, 2),
            "rows, a pair's one": (0, 4, 1), "tiled by CTA": (1, 2, 1)}  # TILED, BPR, G
    arms = [(name, way, p) for p in (4, 8) for name, way in ways.items()]
    for name, way, p in arms:
        got = int(np.bitwise_xor.reduce(np.array(launch(layouts[way[0]], way, p))))
        print(f"check {name}, {p} rows in flight: {'ok' if got == want else 'WRONG'}")
    nbytes = packed.nbytes
    print(f"{len(copies[0])} copies of {nbytes / 1e6:.1f} MB; GPU us a launch "
          f"(CUPTI, {LAUNCHES} launches a run):")
    for _ in range(args.rounds):
        for name, way, p in arms:
            ws = copies[way[0]]

            def run(ws: list[mx.array] = ws, way: tuple[int, int, int] = way, p: int = p) -> None:
                for k in range(LAUNCHES):  # one an eval: see the module's doc
                    mx.eval(launch(ws[k % len(ws)], way, p))

            run()
            spans = cupti_spans(run)
            times = sorted(b - a for a, b, kernel_name, _ in spans if "vx_down" in kernel_name)
            median = times[len(times) // 2]
            print(f"  {name:18} {p} in flight  median {median:6.2f} us  "
                  f"{nbytes / median / 1e3:5.0f} GB/s  ({len(times)} launches)", flush=True)


if __name__ == "__main__":
    main()
