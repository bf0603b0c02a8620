"""Medians of an engine step trace (``vexel bench --trace-steps FILE``), one line per file:

    python3 benchmarks/step_summary.py steps-a.jsonl steps-b.jsonl

build: host time making the step's graph (launch minus submit); submit: inside
``mx.async_eval``; wait: for the previous step's results; interval: start to next start. The
first five steps (prefill, first traces) are left out.
"""

from __future__ import annotations

import itertools
import json
import statistics
import sys


def main() -> None:
    for path in sys.argv[1:]:
        with open(path) as f:
            steps = [json.loads(line) for line in f][5:]
        steps = [s for s in steps if s["prefill_tokens"] == 0] or steps

        def ms(values: list[float]) -> float:
            return round(1e3 * statistics.median(values), 2)

        print(path.rsplit("/", 1)[-1], "median ms:",
              "build", ms([s["launch_s"] - s["submit_s"] for s in steps]),
              "submit", ms([s["submit_s"] for s in steps]),
              "wait", ms([s["wait_s"] for s in steps]),
              "interval", ms([b["start_s"] - a["start_s"] for a, b in itertools.pairwise(steps)]))


if __name__ == "__main__":
    main()
