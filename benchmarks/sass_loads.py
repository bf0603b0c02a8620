"""Shared-memory loads in ``gemv_int8``'s machine code, without a GPU (this machine):

    pip install nvidia-cuda-nvdisasm        # the disassembler, as a wheel
    python benchmarks/sass_loads.py [--cols 4096]

compiles ``gemv_int8``'s body for Q4_0, Q4_K, Q6_K and Q8_0 at their default one-row tilings
with nvcc for sm_90a, in the signature MLX generates (as tests/test_quant_kernels.py's nvcc test
does), disassembles it and prints, per format, the kernel's instruction count and its
shared-memory loads by width. The counts are static: a kernel with two paths (Q4_K's 16-byte
and byte-wise reads) shows both. Session 13 used it to see what a change to the kernel's
shared-memory reads does before a GPU could time it.
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

TYPES = [T.Q4_0, T.Q4_K, T.Q6_K, T.Q8_0]


def nvdisasm() -> str:
    """The disassembler: on PATH, or where the nvidia-cuda-nvdisasm wheel puts it."""
    found = shutil.which("nvdisasm")
    wheel = Path(sysconfig.get_paths()["purelib"]) / "nvidia" / "cu13" / "bin" / "nvdisasm"
    if found is None and not wheel.is_file():
        sys.exit("nvdisasm not found: pip install nvidia-cuda-nvdisasm")
    return found or str(wheel)


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
        sass = subprocess.run([nvdisasm(), "-c", str(cubin)], capture_output=True, text=True,
                              check=True).stdout
    for fn in re.split(r"\n\s*\.text\.", sass)[1:]:
        match = re.match(r"_Z\d+k(\d+)", fn)
        if match is None:
            continue
        loads = collections.Counter(re.findall(r"\b(LDS(?:\.[A-Z0-9]+)*)", fn))
        count = len(re.findall(r"/\*[0-9a-f]{4}\*/", fn))
        print(f"{TYPES[int(match[1])].name}: {count} instructions, shared-memory loads "
              + ", ".join(f"{k} {v}" for k, v in sorted(loads.items())))


if __name__ == "__main__":
    main()
