"""Building and running the CPU emulations of the CUDA and Metal kernels
(tests/kernel_emulation): the kernels' own sources compiled as C++20, every GPU thread an OS
thread (Metal's bodies wrapped as mx.fast.metal_kernel wraps them: `metal_program`). And
compiling the CUDA kernels for the GPU with nvcc (`nvcc_registers`), where no GPU is needed to
check that they compile and what they cost in registers."""

from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import mlx.core as mx
import numpy as np
import pytest

EMULATION = Path(__file__).parent / "kernel_emulation"


def cxx20(out: Path) -> str:
    """The C++20 compiler, tried in *out*; skips the test where none with ``<barrier>``
    exists."""
    compiler = shutil.which("g++") or shutil.which("clang++")
    if compiler is None:
        pytest.skip("the kernel emulations need a C++20 compiler (g++ or clang++)")
    probe = out / "probe.cpp"
    probe.write_text("#include <barrier>\nint main() { std::barrier<> b(1); }\n")
    if subprocess.run([compiler, "-std=c++20", "-pthread", str(probe), "-o", str(out / "probe")],
                      capture_output=True).returncode:
        pytest.skip(f"{compiler} lacks C++20's <barrier>, which the kernel emulations need")
    return compiler


def build(out: Path, source: str, include_dirs: list[Path], flags: Sequence[str] = ()) -> Path:
    """Compile ``kernel_emulation/<source>`` into *out* (with *flags*); skips the test where
    no C++20 compiler with ``<barrier>`` exists."""
    compiler = cxx20(out)
    binary = out / Path(source).stem
    done = subprocess.run(
        [compiler, "-std=c++20", "-O1", "-pthread", *flags, f"-I{EMULATION}",
         *(f"-I{d}" for d in include_dirs), str(EMULATION / source), "-o", str(binary)],
        capture_output=True, text=True,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return binary


def run(binary: Path, args: list[object], stdin: bytes) -> bytes:
    return run_with_stderr(binary, args, stdin)[0]


# Seconds an emulated launch may take (test_feed_forward's take ~20 s on CI's two cores). A
# kernel whose CTA waits for work no CTA will do (a count left set by the launch before, say)
# never ends in the emulation, which runs CTAs one after another; this names it instead of
# pytest's timeout.
RUN_SECONDS = 300


def run_with_stderr(binary: Path, args: list[object], stdin: bytes) -> tuple[bytes, str]:
    try:
        done = subprocess.run([str(binary), *map(str, args)], input=stdin, capture_output=True,
                              timeout=RUN_SECONDS)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"{binary.name} {args} ran past {RUN_SECONDS} s: a CTA waiting "
                             "for work that no CTA does?") from None
    assert done.returncode == 0, f"{binary.name} {args} exited with {done.returncode}"
    return done.stdout, done.stderr.decode()


def nvcc_registers(preamble: str, kernels: Sequence[str], out: Path, arch: str = "sm_90a",
                   include_dirs: list[Path] | None = None) -> dict[int, int]:
    """Compile *kernels*, whose ``__global__`` functions are named ``k0``, ``k1``, ... in
    order, each after *preamble*, with nvcc for *arch* in *out* (headers also from
    *include_dirs*); skips the test where nvcc is missing. The kernels are split into one
    translation unit per CPU, compiled side by side (one nvcc took ~150 s for the quantized
    kernels on CI's two cores). ptxas's registers a thread, by kernel number."""
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("needs nvcc")
    parts = max(1, min(len(kernels), os.cpu_count() or 1))
    runs = []
    for part in range(parts):
        unit = out / f"k{part}.cu"
        unit.write_text("\n".join([preamble, *kernels[part::parts]]))
        runs.append(subprocess.Popen(
            [nvcc, f"-arch={arch}", "-c", "--resource-usage",
             *(f"-I{d}" for d in include_dirs or []), "-o", str(unit.with_suffix(".o")),
             str(unit)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    used: dict[int, int] = {}
    for run in runs:
        output = run.communicate()[0]
        assert run.returncode == 0, output[-3000:]
        used.update({int(m[1]): int(m[2]) for m in re.finditer(
            r"entry function '_Z\d+k(\d+)P.*?Used (\d+) registers", output, re.S)})
    return used


# ---- Metal: mx.fast.metal_kernel's wrapping, for the CPU (kernel_emulation/run_metal.cpp) ----

# MLX's names for dtypes in the sources it generates (get_type_string)
METAL_TYPES = {mx.uint8: "uint8_t", mx.uint32: "uint32_t", mx.int32: "int32_t", mx.float32: "float",
               mx.float16: "float16_t", mx.bfloat16: "bfloat16_t"}
# The attributes metal_kernel passes to a body that names them, in its order, with their types
# (mlx/backend/metal/custom_kernel.cpp; those the emulation's launch provides: metal_on_cpu.h)
METAL_ATTRIBUTES = (("simdgroup_index_in_threadgroup", "uint"),
                    ("thread_index_in_simdgroup", "uint"),
                    ("thread_index_in_threadgroup", "uint"),
                    ("thread_position_in_grid", "uint3"),
                    ("thread_position_in_threadgroup", "uint3"),
                    ("threadgroup_position_in_grid", "uint3"),
                    ("threads_per_threadgroup", "uint3"))
METAL_CONSTANT_BELOW = 8  # elements: MLX passes a smaller input in `constant` memory


@dataclass(frozen=True)
class MetalKernel:
    """One instantiation of a kernel as ``mx.fast.metal_kernel(name, input_names,
    output_names, body, header)`` builds it for a call with *template* and arrays of these
    dtypes; *constant*: for each input, whether it has fewer than `METAL_CONSTANT_BELOW`
    elements, which MLX passes in ``constant`` memory (empty: none)."""

    name: str
    input_names: tuple[str, ...]
    output_names: tuple[str, ...]
    body: str
    header: str
    template: tuple[tuple[str, int | bool | mx.Dtype], ...]
    input_dtypes: tuple[mx.Dtype, ...]
    output_dtypes: tuple[mx.Dtype, ...]
    constant: tuple[bool, ...] = ()

    def _arg(self, value: int | bool | mx.Dtype) -> str:
        if isinstance(value, mx.Dtype):
            return METAL_TYPES[value]
        return str(int(value))  # MLX prints bools as 1 and 0

    @property
    def kernel_name(self) -> str:
        """MLX's name: the template arguments, then the arrays' dtypes, an input passed in
        ``constant`` memory marked ``c`` (mlx/backend/common/metal_kernel.cpp: one name, one
        signature)."""
        args = ", ".join(self._arg(v) for _, v in self.template)
        constant = self.constant or (False,) * len(self.input_names)
        inputs = [METAL_TYPES[d] + ("c" if small else "")
                  for d, small in zip(self.input_dtypes, constant, strict=True)]
        return "_".join([f"custom_kernel_{self.name}", re.sub(r"<|>|, ", "_", f"<{args}>")[:-1],
                         *inputs, *(METAL_TYPES[d] for d in self.output_dtypes)])

    def source(self) -> str:
        """The function MLX's write_signature writes around the body (without the header): the
        template arguments as template parameters (dtypes as typenames), each input with its
        ``_shape`` and ``_strides`` where the body uses them, the outputs, then the attributes
        the body names; then MLX's instantiation of it.

        The body's threadgroup arrays become ``static`` (one threadgroup runs at a time in
        the emulation), filled with NaN bytes as each threadgroup starts (a GPU leaves them
        undefined, the CPU would keep the last threadgroup's values), by a rewrite of the
        text: Metal's ``threadgroup`` also qualifies pointers, where ``static`` cannot stand,
        so a macro cannot serve both (metal_on_cpu.h defines it as nothing)."""
        kinds = {int: "int", bool: "bool"}
        params = ", ".join(f"{'typename' if isinstance(v, mx.Dtype) else kinds[type(v)]} {k}"
                           for k, v in self.template)
        args = []
        constant = self.constant or (False,) * len(self.input_names)
        for name, dtype, small in zip(self.input_names, self.input_dtypes, constant, strict=True):
            args.append(f"const {'constant' if small else 'device'} {METAL_TYPES[dtype]}* {name}")
            if f"{name}_shape" in self.body:
                args.append(f"const constant int* {name}_shape")
            if f"{name}_strides" in self.body:
                args.append(f"const constant int64_t* {name}_strides")
            if f"{name}_ndim" in self.body:
                raise NotImplementedError("the emulation passes inputs' shapes and strides")
        args += [f"device {METAL_TYPES[d]}* {n}"
                 for n, d in zip(self.output_names, self.output_dtypes, strict=True)]
        args = [f"{a} [[buffer({i})]]" for i, a in enumerate(args)]
        args += [f"{t} {a} [[{a}]]" for a, t in METAL_ATTRIBUTES if a in self.body]
        body, arrays = re.subn(r"(?m)^(\s*)(threadgroup\s+[\w:]+\s+(\w+)\s*\[[^;]*\];)",
                               r"\1static \2 poison_threadgroup_array(\3);", self.body)
        if len(re.findall(r"(?m)^\s*threadgroup\b", self.body)) != arrays:
            raise ValueError(f"{self.name}: a threadgroup declaration not of the form "
                             "`threadgroup TYPE NAME[...]` (the emulation makes those static)")
        name = self.kernel_name
        instance = f"{name}<{', '.join(self._arg(v) for _, v in self.template)}>"
        return "\n".join([f"template <{params}>" if params else "",
                          f"[[kernel]] void {name}(",
                          ",\n".join(f"  {a}" for a in args) + ") {",
                          body, "}",
                          # MLX's explicit instantiation (g++ ignores the attributes)
                          f'template [[host_name("{name}")]] [[kernel]] decltype({instance}) '
                          f"{instance};" if params else ""])

    def launcher(self) -> str:
        """The entry of run_metal.cpp's table that runs this kernel on a launch's buffers."""
        args = []
        for i, (name, dtype) in enumerate(zip(self.input_names, self.input_dtypes, strict=True)):
            args.append(f"b.input<{METAL_TYPES[dtype]}>({i})")
            if f"{name}_shape" in self.body:
                args.append(f"b.shape({i})")
            if f"{name}_strides" in self.body:
                args.append(f"b.stride({i})")
        args += [f"b.output<{METAL_TYPES[d]}>({i})" for i, d in enumerate(self.output_dtypes)]
        args += [f"p.{a}" for a, _ in METAL_ATTRIBUTES if a in self.body]
        template = f"<{', '.join(self._arg(v) for _, v in self.template)}>" if self.template else ""
        return (f'  {{"{self.kernel_name}", [](const Buffers& b) {{\n'
                f"    launch(b.groups, b.threads, b.grid, [&](const ThreadPosition& p) {{\n"
                f"      {self.kernel_name}{template}({', '.join(args)});\n"
                f"    }});\n  }}}},")


def metal_program(kernels: Sequence[MetalKernel]) -> str:
    """metal_kernels.inc for run_metal.cpp: the kernels' common header (MLX compiles one per
    kernel), each kernel as `MetalKernel.source` writes it, and the table of launchers."""
    headers = {k.header for k in kernels}
    if len(headers) != 1:
        raise ValueError("the kernels of one emulation share their header")
    unique = {k.kernel_name: k for k in kernels}.values()
    if len({k.source() for k in unique}) != len({k.source() for k in kernels}):
        raise ValueError("kernels of one name and different signatures (inputs in constant "
                         "memory for some calls, not others): build them apart")
    return "\n".join(["// Written by tests/emulation.py (metal_program).",
                      "using namespace metal;  // as MLX's metal/utils.h (its bf16.h) has it",
                      headers.pop(),
                      *(k.source() for k in unique),
                      "#undef device", "#undef constant", "#undef thread", "#undef threadgroup",
                      "const std::pair<const char*, Kernel> KERNELS[] = {",
                      *(k.launcher() for k in unique), "};", ""])


METAL_THREADGROUP_MEMORY = 32 * 1024  # bytes a threadgroup may declare on Apple GPUs
# [[kernel]] and [[buffer(i)]] stay in the text, as MLX writes them: g++ ignores them. A Metal
# load through a float4 or half4 pointer needs that type's alignment (16, 8), which x86 does
# not: the sanitizer stops the emulation at a misaligned one.
METAL_FLAGS = ("-Wno-attributes", "-fsanitize=alignment", "-fno-sanitize-recover=alignment")


def build_metal(out: Path, kernels: Sequence[MetalKernel]) -> Path:
    """run_metal.cpp with *kernels*, built in *out*."""
    (out / "metal_kernels.inc").write_text(metal_program(kernels))
    return build(out, "run_metal.cpp", [out], METAL_FLAGS)


def metal_address_space_errors(out: Path, kernels: Sequence[MetalKernel]) -> dict[str, str]:
    """The compiler's errors, per address space, where *kernels*' sources let a pointer into
    threadgroup or device memory become one into another space (metal_on_cpu.h: that space made
    ``volatile``, syntax only); empty strings where none."""
    compiler = cxx20(out)
    (out / "metal_kernels.inc").write_text(metal_program(kernels))
    errors = {}
    for space in ("threadgroup", "device"):
        done = subprocess.run(
            [compiler, "-std=c++20", "-fsyntax-only", *METAL_FLAGS,
             f"-DVX_VOLATILE_{space.upper()}", f"-I{EMULATION}", f"-I{out}",
             str(EMULATION / "run_metal.cpp")], capture_output=True, text=True)
        lines = done.stderr.splitlines()  # each error, then the line of source it quotes
        errors[space] = "\n".join(f"{line}\n{lines[i + 1] if i + 1 < len(lines) else ''}"
                                  for i, line in enumerate(lines) if "error" in line)
        assert done.returncode == 0 or errors[space], done.stderr[-4000:]
    return errors


class MetalInput(NamedTuple):
    """An input as MLX binds it: its buffer's bytes, the byte offset where the array starts in
    them, its shape and strides in elements (None: row-contiguous)."""

    buffer: np.ndarray
    offset: int
    shape: tuple[int, ...]
    strides: tuple[int, ...] | None = None


def run_metal_kernel(binary: Path, kernel: MetalKernel, inputs: Sequence[MetalInput],
                     grid: tuple[int, int, int], threadgroup: tuple[int, int, int],
                     output_shapes: Sequence[tuple[int, ...]]
                     ) -> tuple[list[mx.array], list[bytes]]:
    """*kernel* on the CPU with a grid and threadgroups of threads along x as the kernel's call
    gives them: its outputs (poisoned with NaN first) as arrays of the kernel's output dtypes,
    and each input's bytes from its offset as the kernel left them. Fails where the kernel
    declares more threadgroup memory than Apple GPUs have."""
    if grid[1:] != (1, 1) or threadgroup[1:] != (1, 1):
        raise NotImplementedError("the emulation launches one-dimensional grids")
    args: list[object] = [kernel.kernel_name, grid[0], threadgroup[0], len(inputs)]
    stdin, sizes = b"", []
    for (buffer, offset, shape, strides), dtype in zip(inputs, kernel.input_dtypes, strict=True):
        strides = strides or tuple(math.prod(shape[d + 1:]) for d in range(len(shape)))
        nbytes = (1 + sum((n - 1) * s for n, s in zip(shape, strides, strict=True))) * dtype.size
        assert offset + nbytes <= buffer.nbytes
        args += [offset, nbytes, len(shape), *shape, *strides]
        stdin += buffer.tobytes()[: offset + nbytes]
        sizes.append(nbytes)
    out_sizes = [math.prod(s) * d.size for s, d in zip(output_shapes, kernel.output_dtypes,
                                                        strict=True)]
    args += [len(out_sizes), *out_sizes]
    out, report = run_with_stderr(binary, args, stdin)
    found = re.search(r"threadgroup memory: (\d+) bytes", report)
    assert found, report
    assert int(found[1]) <= METAL_THREADGROUP_MEMORY, f"{kernel.kernel_name}: {found[1]} " \
        f"bytes of threadgroup memory, over the {METAL_THREADGROUP_MEMORY} an Apple GPU has"
    pieces, start = [], 0
    for n in out_sizes + sizes:
        pieces.append(out[start: start + n])
        start += n
    outputs = [mx.array(np.frombuffer(b, np.uint8)).view(d).reshape(shape)
               for b, d, shape in zip(pieces[:len(out_sizes)], kernel.output_dtypes, output_shapes,
                                               strict=True)]
    return outputs, pieces[len(out_sizes):]


def run_metal(binary: Path, kernel: MetalKernel, inputs: Sequence[tuple[np.ndarray, int,
                                                                        tuple[int, ...]]],
              grid: tuple[int, int, int], threadgroup: tuple[int, int, int],
              output_shape: tuple[int, ...]) -> mx.array:
    """`run_metal_kernel` of a kernel with one output, on row-contiguous inputs (each its
    buffer's bytes, the offset where it starts in them, its shape): the output."""
    outputs, _ = run_metal_kernel(binary, kernel, [MetalInput(*i) for i in inputs], grid,
                                  threadgroup, [output_shape])
    (output,) = outputs
    return output


class MetalRecorder:
    """Stands in for ``mx.fast.metal_kernel`` (`metal_kernels_on_cpu`), so that a library
    wrapper plans and calls its Metal kernels exactly as on an Apple GPU: each call's kernel
    is recorded in `kernels` (`build_metal` compiles them) and, given *binary*, run there,
    writing what the kernel wrote into its inputs back into them, as the GPU's in-place writes
    would. Without a binary each output comes back NaN (zero for integers). *views*: arrays
    that are views, with their buffer, offset and strides, which MLX binds as they are where
    a kernel does not ask for row-contiguous inputs (Python cannot see them); an input is
    taken for one where it has its shape, dtype and values (a wrapper's ``astype`` to the
    same dtype makes another Python object of the same array)."""

    def __init__(self, binary: Path | None = None,
                 views: Sequence[tuple[mx.array, MetalInput]] = ()) -> None:
        self.binary = binary
        self.views = list(views)
        self.views_bound = 0  # inputs bound as views: a test checks that its views were
        self.kernels: list[MetalKernel] = []

    def _view(self, a: mx.array) -> MetalInput | None:
        return next((bound for v, bound in self.views if v.shape == a.shape
                     and v.dtype == a.dtype and (v is a or mx.array_equal(v, a).item())), None)

    def __call__(self, name: str, input_names: Sequence[str], output_names: Sequence[str],
                 source: str, header: str = "", ensure_row_contiguous: bool = True,
                 atomic_outputs: bool = False) -> Callable[..., list[mx.array]]:
        if atomic_outputs:
            raise NotImplementedError("the emulation has no atomic outputs")

        def call(*, inputs: Sequence[mx.array], output_shapes: Sequence[Sequence[int]],
                 output_dtypes: Sequence[mx.Dtype], grid: tuple[int, int, int],
                 threadgroup: tuple[int, int, int], template: Sequence[tuple[str, Any]] = (),
                 init_value: float | None = None, **_: object) -> list[mx.array]:
            if init_value is not None and not math.isnan(init_value):
                raise NotImplementedError("the emulation poisons outputs with NaN alone")
            kernel = MetalKernel(name, tuple(input_names), tuple(output_names), source, header,
                                 tuple(template), tuple(a.dtype for a in inputs),
                                 tuple(output_dtypes),
                                 tuple(a.size < METAL_CONSTANT_BELOW for a in inputs))
            self.kernels.append(kernel)
            shapes = [tuple(s) for s in output_shapes]
            if self.binary is None:
                return [mx.full(s, float("nan") if mx.issubdtype(d, mx.floating) else 0, d)
                        for s, d in zip(shapes, output_dtypes, strict=True)]
            views = [None if ensure_row_contiguous else self._view(a) for a in inputs]
            self.views_bound += sum(v is not None for v in views)
            bound = [v or MetalInput(np.array(a.reshape(-1).view(mx.uint8)), 0, tuple(a.shape))
                     for a, v in zip(inputs, views, strict=True)]
            outputs, left = run_metal_kernel(self.binary, kernel, bound, grid, threadgroup,
                                             shapes)
            for a, v, b, after in zip(inputs, views, bound, left, strict=True):
                if v is None and after != b.buffer.tobytes():
                    a[...] = mx.array(np.frombuffer(after, np.uint8)).view(a.dtype).reshape(
                        a.shape)
            return outputs

        return call


@contextmanager
def metal_kernels_on_cpu(recorder: MetalRecorder,
                         *caches: Callable[..., Any]) -> Iterator[MetalRecorder]:
    """``mx.fast.metal_kernel`` replaced by *recorder* for the block, the library's cached
    kernels (*caches*, functools.cache'd makers) dropped before and after, so that the
    wrappers make theirs from the recorder within and from MLX after."""
    original = mx.fast.metal_kernel
    for c in caches:
        c.cache_clear()  # type: ignore[attr-defined]
    mx.fast.metal_kernel = recorder
    try:
        yield recorder
    finally:
        mx.fast.metal_kernel = original
        for c in caches:
            c.cache_clear()  # type: ignore[attr-defined]
