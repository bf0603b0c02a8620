"""Summarise an Nsight Systems trace (exported to SQLite): where the GPU's time went.

    nsys profile --trace=cuda --cuda-graph-trace=node -o run vexel bench ...
    nsys export --type sqlite -o run.sqlite run.nsys-rep
    python benchmarks/nsys_summary.py run.sqlite [--bin-ms 100] [--top 25]

Prints the GPU's busy time (the union of kernel and copy intervals) against the traced span,
the busy share per time bin (prefill and decode phases show up as different levels), and the
kernels that took the most time, grouped by name. Busy well below the span means the host
(graph building, Python) sets the pace, not the kernels.
"""

from __future__ import annotations

import argparse
import sqlite3
from collections import defaultdict


def intervals(db: sqlite3.Connection) -> list[tuple[int, int, str]]:
    tables = {r[0] for r in db.execute("select name from sqlite_master where type='table'")}
    out: list[tuple[int, int, str]] = []
    if "CUPTI_ACTIVITY_KIND_KERNEL" in tables:
        out += db.execute(
            "select k.start, k.end, s.value from CUPTI_ACTIVITY_KIND_KERNEL k "
            "join StringIds s on s.id = k.shortName").fetchall()
    for table, label in (("CUPTI_ACTIVITY_KIND_MEMCPY", "[memcpy]"),
                         ("CUPTI_ACTIVITY_KIND_MEMSET", "[memset]")):
        if table in tables:
            out += [(a, b, label) for a, b in db.execute(f"select start, end from {table}")]
    return sorted(out)


def busy_union(spans: list[tuple[int, int, str]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for a, b, _ in spans:
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    return merged


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("sqlite")
    ap.add_argument("--bin-ms", type=float, default=100.0)
    ap.add_argument("--top", type=int, default=25)
    args = ap.parse_args()
    spans = intervals(sqlite3.connect(args.sqlite))
    if not spans:
        raise SystemExit("no kernels in the trace")
    merged = busy_union(spans)
    t0, t1 = merged[0][0], max(b for _, b in merged)
    busy = sum(b - a for a, b in merged)
    print(f"span {(t1 - t0) / 1e6:.1f} ms, GPU busy {busy / 1e6:.1f} ms "
          f"({100 * busy / (t1 - t0):.0f}%), {len(spans)} kernels/copies")
    width = int(args.bin_ms * 1e6)
    bins: dict[int, int] = defaultdict(int)
    counts: dict[int, int] = defaultdict(int)
    for a, b in merged:
        while a < b:
            k = (a - t0) // width
            end = min(b, t0 + (k + 1) * width)
            bins[k] += end - a
            a = end
    for a, _, _ in spans:
        counts[(a - t0) // width] += 1
    print(f"\nbusy per {args.bin_ms:g} ms bin (bin: busy%, launches)")
    print(" ".join(f"{k}:{100 * bins[k] / width:.0f}%/{counts[k]}"
                   for k in range(max(bins) + 1)))
    total: dict[str, int] = defaultdict(int)
    n: dict[str, int] = defaultdict(int)
    for a, b, name in spans:
        total[name] += b - a
        n[name] += 1
    print(f"\ntop kernels (total ms, count, mean us, share of busy)")
    for name, t in sorted(total.items(), key=lambda kv: -kv[1])[: args.top]:
        print(f"{t / 1e6:9.2f} {n[name]:8d} {t / n[name] / 1e3:9.1f} "
              f"{100 * t / busy:5.1f}%  {name[:100]}")


if __name__ == "__main__":
    main()
