"""Building and running the CPU emulations of the CUDA kernels (tests/kernel_emulation):
the kernels' own sources compiled as C++20, every CUDA thread an OS thread. And compiling
them for the GPU with nvcc (`nvcc_registers`), where no GPU is needed to check that they
compile and what they cost in registers."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

EMULATION = Path(__file__).parent / "kernel_emulation"


def build(out: Path, source: str, include_dirs: list[Path]) -> Path:
    """Compile ``kernel_emulation/<source>`` into *out*; skips the test where no C++20
    compiler with ``<barrier>`` exists."""
    compiler = shutil.which("g++") or shutil.which("clang++")
    if compiler is None:
        pytest.skip("the CUDA emulation needs a C++20 compiler (g++ or clang++)")
    probe = out / "probe.cpp"
    probe.write_text("#include <barrier>\nint main() { std::barrier<> b(1); }\n")
    if subprocess.run([compiler, "-std=c++20", "-pthread", str(probe), "-o", str(out / "probe")],
                      capture_output=True).returncode:
        pytest.skip(f"{compiler} lacks C++20's <barrier>, which the CUDA emulation needs")
    binary = out / Path(source).stem
    done = subprocess.run(
        [compiler, "-std=c++20", "-O1", "-pthread", f"-I{EMULATION}",
         *(f"-I{d}" for d in include_dirs), str(EMULATION / source), "-o", str(binary)],
        capture_output=True, text=True,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return binary


def run(binary: Path, args: list[object], stdin: bytes) -> bytes:
    done = subprocess.run([str(binary), *map(str, args)], input=stdin, capture_output=True)
    assert done.returncode == 0, f"{binary.name} {args} exited with {done.returncode}"
    return done.stdout


def nvcc_registers(source: str, out: Path, arch: str = "sm_90a",
                   include_dirs: list[Path] | None = None) -> dict[int, int]:
    """Compile *source*, whose kernels are named ``k0``, ``k1``, ..., with nvcc for *arch* in
    *out* (headers also from *include_dirs*); skips the test where nvcc is missing. ptxas's
    registers a thread, by kernel number."""
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("needs nvcc")
    (out / "k.cu").write_text(source)
    done = subprocess.run([nvcc, f"-arch={arch}", "-c", "--resource-usage",
                           *(f"-I{d}" for d in include_dirs or []), "-o", str(out / "k.o"),
                           str(out / "k.cu")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    return {int(m[1]): int(m[2]) for m in re.finditer(
        r"entry function '_Z\d+k(\d+)P.*?Used (\d+) registers", done.stdout + done.stderr,
        re.S)}
