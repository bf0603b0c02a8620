"""One line per profiled GGUF kernel from an Nsight Compute CSV (GPU machine):

    ncu --csv --metrics ... python3 benchmarks/kernel_ncu.py > ncu.csv
    python3 benchmarks/ncu_summary.py ncu.csv

prints "ID kernel grid metric=value ..." for the kernels whose names contain ``vx_``.
"""

from __future__ import annotations

import csv
import sys
from collections import defaultdict


def main() -> None:
    rows: dict[tuple[int, str, str], dict[str, str]] = defaultdict(dict)
    with open(sys.argv[1]) as f:
        for r in csv.reader(line for line in f if line.startswith('"')):
            if r[0] == "ID" or "vx_" not in r[4]:
                continue
            rows[(int(r[0]), r[4].split("(")[0], r[8])][r[12]] = r[14]
    for (i, name, grid), metrics in sorted(rows.items()):
        print(i, name, grid, " ".join(f"{k.split('.')[0]}={v}" for k, v in metrics.items()))


if __name__ == "__main__":
    main()
