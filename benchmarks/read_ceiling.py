"""How fast one kernel can read a buffer the size of a one-row product's weights (GPU machine,
under Nsight Compute): the ceiling the one-row goals (% of the 1 GiB copy bandwidth) should be
read against.

    ncu --clock-control none --kernel-name regex:vx_read --csv --metrics \\
        gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed \\
        python3 benchmarks/read_ceiling.py --map map.tsv > ncu.csv
    python3 benchmarks/ncu_summary.py ncu.csv --map map.tsv

A product at one row reads its matrix once (33 MB for 14336x4096 in Q4_0) in ~10 us, so the
ramp of its first loads and the drain of its last are a large part of its time, and a copy of
1 GiB does not see them. This reads buffers of the products' sizes with `read_ceiling.cu`
(16-byte loads, LOADS in flight a thread, grid-strided), over a range of CTA counts and loads,
each kernel ``--launches`` times (Nsight Compute flushes the caches before each), and once
1 GiB as the long-read reference. Each result is checked against numpy's XOR of the buffer.
The map has ``ncu_summary.py``'s columns: "format" is the size's label, "tiling" is
CTAs x threads x loads.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import mlx.core as mx
import numpy as np
from ncu_summary import write_map  # benchmarks/ncu_summary.py

SIZES = {  # label -> bytes, the one-row products' matrices at the Llama-3-8B shapes
    "Q4_0": 14336 * 4096 // 32 * 18,  # also Q4_K's 33.0 MB
    "Q6_K": 14336 * 4096 // 256 * 210,
    "Q8_0": 14336 * 4096 // 32 * 34,
    "1GiB": 1 << 30,
}
SMS = 132  # H200
THREADS = 256
CTAS_PER_SM = (2, 4, 8, 16)
LOADS = (1, 2, 4, 8)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--launches", type=int, default=2)
    ap.add_argument("--map", required=True, help="where to write the launches' table")
    a = ap.parse_args()
    kernel = mx.fast.cuda_kernel(name="vx_read", input_names=["src"], output_names=["out"],
                                 source=(Path(__file__).parent / "read_ceiling.cu").read_text())
    table, next_id = [], 0
    for label, nbytes in SIZES.items():
        src = mx.random.randint(0, 2**31, (nbytes // 4,), dtype=mx.uint32)
        mx.eval(src)
        want = int(np.bitwise_xor.reduce(np.array(src)))
        configs = [(SMS * c, loads) for c in CTAS_PER_SM for loads in LOADS]
        if label == "1GiB":
            configs = [(SMS * 8, 4)]
        for ctas, loads in configs:
            warps = ctas * THREADS // 32
            checks = []
            for _ in range(a.launches):
                (out,) = kernel(inputs=[src], template=[("LOADS", loads)],
                                grid=(ctas * THREADS, 1, 1), threadgroup=(THREADS, 1, 1),
                                output_shapes=[(warps,)], output_dtypes=[mx.uint32])
                mx.eval(out)
                checks.append(int(np.bitwise_xor.reduce(np.array(out))) == want)
            check = "ok" if all(checks) else "WRONG"
            table.append([len(table), label, f"{ctas}x{THREADS}x{loads}", next_id, a.launches,
                          "vx_read", ctas, 0, nbytes, check])
            print(f"read {label} {ctas}x{THREADS}x{loads} ids={next_id}-"
                  f"{next_id + a.launches - 1} {check}", file=sys.stderr)
            next_id += a.launches
        del src
    write_map(a.map, table)


if __name__ == "__main__":
    main()
