"""One line per profiled GGUF kernel from an Nsight Compute CSV (GPU machine):

    ncu --csv --metrics ... python3 benchmarks/kernel_ncu.py > ncu.csv
    python3 benchmarks/ncu_summary.py ncu.csv

prints "ID kernel grid metric=value ..." for the kernels whose names contain ``vx_``.

With ``--map FILE`` (the table ``kernel_ncu.py --int8-sweep --map FILE`` writes), one line per
(format, tiling) instead, fastest first within a format (the default is "check ref"): the mean
over its launches of the time, DRAM and SM throughput (% of peak), the bytes it must move over
the time as % of ``--copy-gbps`` (3,826 GB/s: the H200's copy bandwidth in session 7), and
achieved occupancy, DRAM bytes read, registers, waves per SM and the CTAs per SM that registers
and shared memory allow, where the CSV has them. A launch whose kernel name or grid is not the
map's is flagged "MISMATCH".
"""

from __future__ import annotations

import argparse
import csv
import math
import statistics
from collections import defaultdict

# The launches' table that the workload scripts write (kernel_ncu.py, read_ceiling.py,
# q4_0_ablation.py) and ``--map`` reads: one row per (format, tiling), its launches' first
# Nsight Compute ID and count, the kernel's name and grid, and the bytes it must move.
MAP_COLUMNS = ["index", "format", "tiling", "first_id", "launches", "kernel", "grid", "smem",
               "bytes", "check"]


def write_map(path: str, rows: list[list[object]]) -> None:
    """*rows* (in `MAP_COLUMNS` order) as the tab-separated table ``--map`` reads."""
    with open(path, "w", newline="") as f:
        w = csv.writer(f, delimiter="\t")
        w.writerow(MAP_COLUMNS)
        w.writerows(rows)


TIME_UNITS = {"ns": 1e-3, "nsecond": 1e-3, "us": 1.0, "usecond": 1.0, "ms": 1e3,
              "msecond": 1e3, "s": 1e6, "second": 1e6}  # to microseconds


def read(path: str) -> dict[tuple[int, str, str], dict[str, tuple[str, str]]]:
    """(ID, kernel, grid) -> metric -> (unit, value) of the kernels named ``vx_``."""
    rows: dict[tuple[int, str, str], dict[str, tuple[str, str]]] = defaultdict(dict)
    with open(path) as f:
        for r in csv.reader(line for line in f if line.startswith('"')):
            if r[0] == "ID" or "vx_" not in r[4]:
                continue
            rows[(int(r[0]), r[4].split("(")[0], r[8])][r[12]] = (r[13], r[14])
    return rows


def number(value: str) -> float:
    return float(value.replace(",", ""))


def mean(launches: list[dict[str, tuple[str, str]]], metric: str) -> float | None:
    """*metric*'s mean over the launches that have it (times in microseconds)."""
    values = [number(value) * (TIME_UNITS.get(unit, 1.0) if metric.startswith("gpu__time")
                               else 1.0)
              for unit, value in (m[metric] for m in launches if metric in m)]
    return statistics.fmean(values) if values else None


def sweep_lines(rows: dict[tuple[int, str, str], dict[str, tuple[str, str]]], map_path: str,
                copy_gbps: float) -> list[str]:
    by_id = {i: (name, grid, metrics) for (i, name, grid), metrics in rows.items()}
    out: list[tuple[int, float, str]] = []  # (format's place, time, line)
    with open(map_path) as f:
        table = list(csv.DictReader(f, delimiter="\t"))
    formats = list(dict.fromkeys(entry["format"] for entry in table))
    for entry in table:
        place = formats.index(entry["format"])
        first, launches = int(entry["first_id"]), int(entry["launches"])
        found = [by_id[i] for i in range(first, first + launches) if i in by_id]
        head = f"{entry['format']:5} {entry['tiling']:12} grid {entry['grid']:>4} " \
               f"smem {entry['smem']:>5}"
        if not found:
            out.append((place, math.inf,
                        f"{head}  not profiled ({launches} launches, check {entry['check']})"))
            continue
        flags = [] if all(entry["kernel"] in name and grid == f"({entry['grid']}, 1, 1)"
                          for name, grid, _ in found) else ["MISMATCH"]
        if len(found) < launches:
            flags.append(f"{len(found)}/{launches} launches in the CSV")

        launched = [metrics for _, _, metrics in found]
        us = mean(launched, "gpu__time_duration.sum")
        cells = [f"{us:6.1f} us" if us else "   ? us"]
        if us:
            cells.append(f"{100 * number(entry['bytes']) / (us * 1e3) / copy_gbps:3.0f}% copy")
        for label, metric in (("DRAM", "dram__throughput.avg.pct_of_peak_sustained_elapsed"),
                              ("SM", "sm__throughput.avg.pct_of_peak_sustained_elapsed"),
                              ("occ", "sm__warps_active.avg.pct_of_peak_sustained_active")):
            v = mean(launched, metric)
            if v is not None:
                cells.append(f"{label} {v:4.1f}%")
        dram_read = mean(launched, "dram__bytes_read.sum")
        if dram_read is not None:
            cells.append(f"read {dram_read / 1e6:.1f} MB")
        for label, metric in (("regs", "launch__registers_per_thread"),
                              ("waves", "launch__waves_per_multiprocessor"),
                              ("CTAs/SM by regs", "launch__occupancy_limit_registers"),
                              ("by smem", "launch__occupancy_limit_shared_mem")):
            v = mean(launched, metric)
            if v is not None:
                cells.append(f"{label} {v:g}")
        cells.append(f"check {entry['check']}")
        out.append((place, us or math.inf, f"{head}  " + "  ".join(cells + flags)))
    return [line for *_, line in sorted(out)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("csv")
    ap.add_argument("--map", default=None)
    ap.add_argument("--copy-gbps", type=float, default=3826.0)
    a = ap.parse_args()
    rows = read(a.csv)
    if a.map:
        print("\n".join(sweep_lines(rows, a.map, a.copy_gbps)))
        return
    for (i, name, grid), metrics in sorted(rows.items()):
        print(i, name, grid, " ".join(f"{k.split('.')[0]}={v}" for k, (_, v) in metrics.items()))


if __name__ == "__main__":
    main()
