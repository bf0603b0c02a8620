"""Shared-memory loads in ``gemv_int8``'s machine code, without a GPU (this machine):

    pip install nvidia-cuda-nvdisasm        # the disassembler, as a wheel
    python benchmarks/sass_loads.py [--cols 4096]

compiles ``gemv_int8``'s body for Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K and Q8_0 at their default
one-row tilings with nvcc for sm_90a, in the signature MLX generates (as
tests/test_quant_kernels.py's nvcc test does), disassembles it and prints, per format, the kernel's
instruction count and its shared-memory loads by width. The counts are static: a kernel with two
paths (Q4_K's 16-byte and byte-wise reads) shows both. Session 13 used it to see what a change to
the kernel's shared-memory reads does before a GPU could time it.

Then, per format, one chunk of the main loop as a lane runs it: the instructions from the
pipeline's wait (the first ``DEPBAR.LE``) to the row's reduction (the first ``SHFL.BFLY``),
following each conditional branch's fall-through (no sub-block out of the row; for Q4_K the
instance of the loop that ptxas lays out first, the byte-wise one; the aligned one is the
second line, its first branch taken; for Q4_0 the second line is the checked instance that a
chunk past the row's end takes) and each unconditional branch's target. It
counts instructions, ``IDP.4A``, branches, shared-memory loads by width and the static stall
sum (the 4-bit stall field of each instruction's control bits, bits 105-108: the cycles the
scheduler waits before the warp's next issue, latencies met by scoreboards not included).
Session 15 used it for Q4_0's decode (session 14's Q4_K study counted the same way by hand).
"""

from __future__ import annotations

import argparse
import collections
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import mlx.core as mx
from gguf import GGML_QUANT_SIZES
from gguf import GGMLQuantizationType as T

ROOT = Path(__file__).parent.parent
sys.path.insert(0, str(ROOT))
from tests.test_quant_kernels import mlx_kernel_source  # noqa: E402
from vexel_core.quant.kernels.library import (  # noqa: E402
    _int8_launch,
    default_int8_tiling,
    kernel_source,
)

TYPES = [T.Q4_0, T.Q4_1, T.Q5_0, T.Q5_1, T.Q4_K, T.Q5_K, T.Q6_K, T.Q8_0]


def nvdisasm() -> str:
    """The disassembler: on PATH, or where the nvidia-cuda-nvdisasm wheel puts it."""
    found = shutil.which("nvdisasm")
    wheel = Path(sysconfig.get_paths()["purelib"]) / "nvidia" / "cu13" / "bin" / "nvdisasm"
    if found is None and not wheel.is_file():
        sys.exit("nvdisasm not found: pip install nvidia-cuda-nvdisasm")
    return found or str(wheel)


INSTRUCTION = re.compile(r"/\*([0-9a-f]{4})\*/\s+(.*?)\s*;\s*/\* 0x[0-9a-f]{16} \*/\n"
                         r"\s*/\* 0x([0-9a-f]{16}) \*/")
LABEL = re.compile(r"^(\.L_x_\d+):", re.M)


def chunk_paths(fn: str) -> list[str]:
    """One chunk of the main loop along its fall-through path, and along the path that takes
    its first conditional branch if that one runs the chunk's products too (a second instance
    of the loop: Q4_K's aligned one); see the module's docstring."""
    code: list[str] = []
    stalls: list[int] = []
    at: dict[str, int] = {}  # label: index of the instruction after it
    for m in re.finditer(f"{INSTRUCTION.pattern}|{LABEL.pattern}", fn, re.M):
        if m[4] is not None:
            at[m[4]] = len(code)
        else:
            code.append(m[2])
            stalls.append((int(m[3], 16) >> 41) & 0xF)
    start = next(k for k, c in enumerate(code) if c.startswith("DEPBAR.LE")) + 1

    def walk(take_first: bool) -> list[int]:
        i, path = start, list[int]()
        while not code[i].startswith("SHFL.BFLY") and len(path) < 2000:
            path.append(i)
            target = re.fullmatch(r"(@!?P\d )?BRA `\((\.L_x_\d+)\)", code[i])
            if target and target[1] and take_first:
                take_first = False
            elif target and target[1]:
                target = None  # a conditional branch falls through
            i = at[target[2]] if target else i + 1
        return path

    def count(path: list[int]) -> str:
        ops = [code[k] for k in path]
        loads = collections.Counter(c.split()[0] for c in ops if c.startswith("LDS"))
        return (f"{len(ops)} instructions a chunk, {sum(c.startswith('IDP') for c in ops)} "
                f"IDP.4A, {sum('BRA' in c for c in ops)} branches, stall sum "
                f"{sum(stalls[k] for k in path)}, loads "
                + ", ".join(f"{k} {v}" for k, v in sorted(loads.items())))

    paths = [walk(False), walk(True)]
    idp = [sum(code[k].startswith("IDP") for k in p) for p in paths]
    return [count(paths[0])] + ([f"{count(paths[1])} (its first branch taken)"]
                                if idp[1] == idp[0] else [])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cols", type=int, default=4096)
    a = ap.parse_args()
    header, body = kernel_source("cuda", "gemv_int8")
    source = ["#include <cstdint>", header,
              "struct Shape { int64_t v[2]; __device__ int64_t operator[](int i) const "
              "{ return v[i]; } };"]
    for i, t in enumerate(TYPES):
        elems, nbytes = GGML_QUANT_SIZES[t]
        launch = _int8_launch("cuda", t, (8, a.cols // elems * nbytes), mx.uint8, (1, a.cols),
                              mx.bfloat16, default_int8_tiling(t, a.cols))
        source.extend(mlx_kernel_source(f"k{i}", {"w": "uint8_t", "x": "__nv_bfloat16"},
                                        "__nv_bfloat16", body, launch.template))
    with tempfile.TemporaryDirectory() as tmp:
        cu, cubin = Path(tmp) / "k.cu", Path(tmp) / "k.cubin"
        cu.write_text("\n".join(source))
        subprocess.run(["nvcc", "-arch=sm_90a", "-cubin", f"-I{ROOT / 'tests' / 'nvcc_include'}",
                        "-o", str(cubin), str(cu)], check=True)
        sass = subprocess.run([nvdisasm(), "-c", "-hex", str(cubin)], capture_output=True,
                              text=True, check=True).stdout
    for fn in re.split(r"\n\s*\.text\.", sass)[1:]:
        match = re.match(r"_Z\d+k(\d+)", fn)
        if match is None:
            continue
        loads = collections.Counter(re.findall(r"\b(LDS(?:\.[A-Z0-9]+)*)", fn))
        count = len(re.findall(r"/\*[0-9a-f]{4}\*/", fn))
        print(f"{TYPES[int(match[1])].name}: {count} instructions, shared-memory loads "
              + ", ".join(f"{k} {v}" for k, v in sorted(loads.items())))
        for line in chunk_paths(fn):
            print(f"  {line}")


if __name__ == "__main__":
    main()
