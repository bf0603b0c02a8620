"""What one `mx.fast.cuda_kernel` call costs the host, by the size of its source (GPU machine).

    python benchmarks/custom_kernel_cost.py

MLX joins the kernel's header and body into one string on every call, and hashes that
string on every launch to find the compiled module. Vexel's quantized-product header is
~27 KB. Three kernels with the same tiny body: no header, a 27 KB header, and the same 27 KB
included by absolute path (a ~60-byte header). Prints the host time per call of building
the graph, and of building plus evaluating chains of launches, beside MLX's own addition.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import mlx.core as mx

BODY = """
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) { y[i] = x[i] + (T)1; }
"""


def main() -> None:
    filler = "// " + "-" * 96 + "\n"
    big = filler * 270  # ~27 KB, like the quantized products' header
    folder = Path(tempfile.mkdtemp())
    (folder / "big.cuh").write_text(big)
    kernels = {
        "no header": "",
        "27 KB header": big,
        "27 KB included": f'#include "{folder / "big.cuh"}"\n',
    }
    x = mx.zeros((4096,), dtype=mx.float32)
    mx.eval(x)
    for label, header in kernels.items():
        k = mx.fast.cuda_kernel(name=f"cost_{len(header)}", input_names=["x"],
                                output_names=["y"], source=BODY, header=header)

        def call(a: mx.array, k=k) -> mx.array:  # type: ignore[no-untyped-def]
            return k(inputs=[a], template=[("T", mx.float32), ("N", 4096)], grid=(4096, 1, 1),
                     threadgroup=(256, 1, 1), output_shapes=[a.shape],
                     output_dtypes=[a.dtype])[0]

        report(label, call, x)
    report("mx add (reference)", lambda a: a + 1, x)


def report(label: str, call, x: mx.array, n: int = 400) -> None:  # type: ignore[no-untyped-def]
    mx.eval(call(x))
    t = time.perf_counter()
    for _ in range(n):
        call(x)
    build = (time.perf_counter() - t) / n
    timings = []
    for _ in range(5):
        t = time.perf_counter()
        y = x
        for _ in range(n):
            y = call(y)
        mx.eval(y)
        timings.append((time.perf_counter() - t) / n)
    print(f"{label:20s} build {build * 1e6:6.2f} us/call, build + eval of a chain "
          f"{min(timings) * 1e6:6.2f} us/call")


if __name__ == "__main__":
    main()
