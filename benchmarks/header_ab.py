"""`vexel bench` with the CUDA kernels' headers inlined, as before session 6 (GPU machine).

    python benchmarks/header_ab.py --inline bench --random llama3-8b --dtype q4_0 -n 1 ...
    python benchmarks/header_ab.py bench --random llama3-8b --dtype q4_0 -n 1 ...

The kernels include their headers by path (`vexel_core.gpu.cuda_header`) because MLX copies
and hashes a kernel's whole source on every call and launch. With ``--inline`` the header
is the files' text again, so the two can be timed in one call, alternating. Everything after
the flag is `vexel`'s command line.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from pathlib import Path


def inline_header(files: Sequence[Path]) -> str:
    return "\n".join(Path(f).read_text() for f in files) + "\n"


def main() -> None:
    args = sys.argv[1:]
    if args and args[0] == "--inline":
        args = args[1:]
        for name in ("vexel_core.attention.kernels", "vexel_core.kvcache.kernels",
                     "vexel_core.quant.kernels.library"):
            importlib.import_module(name).cuda_header = inline_header
        print("CUDA kernel headers inlined", file=sys.stderr)
    from vexel_core.cli import console_main

    sys.argv = ["vexel", *args]
    console_main()


if __name__ == "__main__":
    main()
