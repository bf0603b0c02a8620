"""Where a py-spy profile's time goes, by frame: collapsed stacks (``py-spy record --format
raw``, native frames with ``--native``) summed per frame, inclusive and as the leaf.

    python benchmarks/spy_summary.py spy.txt [--under async_eval] [--without nvrtc]
                                             [--through nvrtcCompile] [--top 30]

``--under NAME`` keeps the samples whose stack passes through a frame whose text contains
NAME (e.g. ``async_eval``: MLX's submit of a built step) and shares are of those samples.
``--without NAME`` drops the samples that pass through such a frame (e.g. ``nvrtc``: the
first launch of each kernel compiles it, which would hide the steady state's submit).
``--through NAME`` keeps only the samples that pass through such a frame, whole stacks, so
the frames above it are counted too (e.g. ``nvrtcCompile``: which Python calls compile).
"""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Iterable


def frame_name(frame: str) -> str:
    """A frame without its file and line: ``eval_gpu (mlx/...cpp:42)`` -> ``eval_gpu``."""
    return frame.split(" (", 1)[0]


def summarise(lines: Iterable[str], under: str | None, without: str | None = None,
              through: str | None = None) -> tuple[int, Counter[str], Counter[str]]:
    """(samples kept, inclusive samples per frame, leaf samples per frame)."""
    total, inclusive, leaf = 0, Counter[str](), Counter[str]()
    for line in lines:
        stack, _, count = line.rstrip("\n").rpartition(" ")
        if not stack or not count.isdigit():
            continue
        frames = [frame_name(f) for f in stack.split(";")]
        if without is not None and any(without in f for f in frames):
            continue
        if through is not None and not any(through in f for f in frames):
            continue
        if under is not None:
            at = next((i for i, f in enumerate(frames) if under in f), None)
            if at is None:
                continue
            frames = frames[at:]
        n = int(count)
        total += n
        for f in set(frames):
            inclusive[f] += n
        leaf[frames[-1]] += n
    return total, inclusive, leaf


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("profile")
    ap.add_argument("--under")
    ap.add_argument("--without")
    ap.add_argument("--through")
    ap.add_argument("--top", type=int, default=30)
    a = ap.parse_args()
    with open(a.profile) as f:
        total, inclusive, leaf = summarise(f, a.under, a.without, a.through)
    print(f"{total} samples" + (f" under {a.under!r}" if a.under else "")
          + (f" without {a.without!r}" if a.without else "")
          + (f" through {a.through!r}" if a.through else ""))
    for title, counts in (("inclusive", inclusive), ("leaf", leaf)):
        print(f"-- {title}")
        for name, n in counts.most_common(a.top):
            print(f"{n / max(total, 1):6.1%}  {name[:140]}")


if __name__ == "__main__":
    main()
