"""Where the GPU's time goes during a `vexel` command: busy time, phases, top kernels.

    python benchmarks/gpu_timeline.py [--bin-ms 100] [--top 30] [--where NAME] -- bench ...

Runs the command in this process under PyTorch's profiler, whose CUPTI tracing records every
kernel the process launches, MLX's included (the GPU machine has PyTorch but no Nsight
Systems). Prints the GPU's busy time (the union of kernel and copy intervals) against the
traced span, the busy share per time bin (prefill and decode show up as different levels), and
the kernels that took the most time, grouped by name. Busy well below the span means the host
(graph building, Python, synchronisation) sets the pace, not the kernels.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from collections import defaultdict
from collections.abc import Callable

Span = tuple[float, float, str, str]  # start us, end us, name, grid ("" for copies)


def trace(argv: list[str]) -> list[Span]:
    from vexel_core.cli import main

    def run() -> None:
        code = main(argv)
        if code:
            raise SystemExit(f"vexel {' '.join(argv)} exited with {code}")

    return cupti_spans(run)


def cupti_spans(run: Callable[[], object]) -> list[Span]:
    """The kernels, copies and memsets the GPU ran during ``run()``, in start order."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        run()
    del torch
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.json")
        prof.export_chrome_trace(path)
        with open(path) as f:
            events = json.load(f)["traceEvents"]
    return sorted((e["ts"], e["ts"] + e["dur"], e["name"], str(e.get("args", {}).get("grid", "")))
                  for e in events
                  if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset") and "dur" in e)


def median_group_span(spans: list[Span], per_group: int) -> float:
    """The median time from the first start to the last end of each run of *per_group*
    consecutive spans (a chain's layers of that many kernels each, in start order)."""
    return statistics.median(max(e for _, e, _, _ in spans[i : i + per_group]) - spans[i][0]
                             for i in range(0, len(spans) - per_group + 1, per_group))


def summarize(spans: list[Span], bin_us: float, top: int) -> None:
    merged: list[list[float]] = []
    for a, b, _, _ in spans:
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    t0, t1 = merged[0][0], max(b for _, b in merged)
    busy = sum(b - a for a, b in merged)
    print(f"span {(t1 - t0) / 1e3:.1f} ms, GPU busy {busy / 1e3:.1f} ms "
          f"({100 * busy / (t1 - t0):.0f}%), {len(spans)} kernels and copies")
    bins: dict[int, float] = defaultdict(float)
    launches: dict[int, int] = defaultdict(int)
    for a, b in merged:
        while a < b:
            k = int((a - t0) // bin_us)
            end = min(b, t0 + (k + 1) * bin_us)
            bins[k] += end - a
            a = end
    for a, _, _, _ in spans:
        launches[int((a - t0) // bin_us)] += 1
    print(f"\nper {bin_us / 1e3:g} ms bin: busy %/kernels")
    print(" ".join(f"{100 * bins[k] / bin_us:.0f}/{launches[k]}" for k in range(max(bins) + 1)))
    total: dict[str, float] = defaultdict(float)
    count: dict[str, int] = defaultdict(int)
    for a, b, name, _ in spans:
        total[name] += b - a
        count[name] += 1
    print("\ntotal ms   count   mean us  share  kernel")
    for name, t in sorted(total.items(), key=lambda kv: -kv[1])[:top]:
        print(f"{t / 1e3:8.2f} {count[name]:7d} {t / count[name]:9.1f} {100 * t / busy:5.1f}%  "
              f"{name[:110]}")


def where(spans: list[Span], pattern: str, bin_us: float, last: int = 0) -> None:
    """Kernels whose name contains *pattern*: launches per time bin, and by grid size with the
    spread of their durations (a mean above the median: a few slow launches, such as the first
    reader of a page the host wrote); with *last*, the durations of the last launches in
    order."""
    t0 = spans[0][0]
    hits = [span for span in spans if pattern in span[2]]
    per_bin: dict[int, int] = defaultdict(int)
    by_grid: dict[str, list[float]] = defaultdict(list)
    for a, b, _, grid in hits:
        per_bin[int((a - t0) // bin_us)] += 1
        by_grid[grid or "-"].append(b - a)
    print(f"\n'{pattern}': {len(hits)} launches; per {bin_us / 1e3:g} ms bin (bin:count):")
    print(" ".join(f"{k}:{v}" for k, v in sorted(per_bin.items())))
    for grid, durs in sorted(by_grid.items(), key=lambda kv: -sum(kv[1]))[:8]:
        q = statistics.quantiles(durs, n=10, method="inclusive") if len(durs) > 1 else durs * 9
        print(f"  grid {grid}: {len(durs)} x {sum(durs) / len(durs):.1f} us (p10 {q[0]:.1f}, "
              f"median {statistics.median(durs):.1f}, p90 {q[-1]:.1f}, max {max(durs):.1f})")
    if last:  # which launches are the slow ones: the last *last* in order, whole microseconds
        durations = " ".join(f"{b - a:.0f}" for a, b, _, _ in hits[-last:])
        print(f"  last {last} launches, us: {durations}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin-ms", type=float, default=100.0)
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--where", action="append", default=[],
                    help="also show when kernels whose name contains this ran, and their grids")
    ap.add_argument("--last", type=int, default=0,
                    help="with --where: the durations of the last this many launches, in order")
    ap.add_argument("argv", nargs=argparse.REMAINDER, help="-- then the vexel command")
    args = ap.parse_args()
    argv = args.argv[1:] if args.argv[:1] == ["--"] else args.argv
    spans = trace(argv)
    if not spans:
        raise SystemExit("no GPU activity was traced")
    summarize(spans, args.bin_ms * 1e3, args.top)
    for pattern in args.where:
        where(spans, pattern, args.bin_ms * 1e3, args.last)
    sys.stdout.flush()
    os._exit(0)  # as the console script: the engine's MLX thread must not race shutdown


if __name__ == "__main__":
    main()
