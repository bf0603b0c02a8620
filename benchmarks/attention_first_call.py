"""How long MLX's fused attention takes the first time it meets a shape, and after.

    python benchmarks/attention_first_call.py

On CUDA each new shape builds a plan (notes/engine-gpu.md, session 4: 40-650 ms, ~1 s for the
first call with a mask array), which is why the backends pad prefill rows to
`bucket_length`. Llama-3-8B heads (32 query, 8 KV, D = 128), bfloat16.
"""

from __future__ import annotations

import time

import mlx.core as mx

HQ, HKV, D = 32, 8, 128


def first_calls(L: int, B: int = 1, Lk: int | None = None,
                mask: str | mx.array = "causal") -> list[float]:
    """Milliseconds of three calls in a row at one shape."""
    Lk = Lk or L
    q = mx.random.normal((B, HQ, L, D)).astype(mx.bfloat16)
    k = mx.random.normal((B, HKV, Lk, D)).astype(mx.bfloat16)
    v = mx.random.normal((B, HKV, Lk, D)).astype(mx.bfloat16)
    mx.eval(q, k, v)
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        mx.eval(mx.fast.scaled_dot_product_attention(q, k, v, scale=D**-0.5, mask=mask))
        times.append(round((time.perf_counter() - t0) * 1e3, 2))
    return times


def main() -> None:
    shapes: list[dict[str, int]] = [
        {"L": 512}, {"L": 496}, {"L": 497}, {"L": 16, "Lk": 512}, {"L": 17, "Lk": 513},
        {"L": 512, "B": 4}, {"L": 512, "B": 5}, {"L": 1024},
    ]
    for shape in shapes:
        print(shape, "causal, ms:", first_calls(**shape), flush=True)
    mask = mx.arange(512)[None, :] <= mx.arange(512)[:, None]
    print({"L": 512}, "mask array, ms:", first_calls(512, mask=mask), flush=True)


if __name__ == "__main__":
    main()
