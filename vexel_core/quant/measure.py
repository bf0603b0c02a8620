"""Memory and error of each format's MLX representation, on random blocks.

``python -m vexel_core.quant.measure [rows cols]`` prints, per format: bits per weight in the
file, in our MLX representation and as a float16 matrix; whether `take` reproduces
`gguf.quants.dequantize` bit for bit; and the largest matrix-product error, ours and that of
the float16 alternative, relative to ``max(|x| @ |W|.T)`` (float64 reference).

`random_raw` is also what the tests feed the formats.
"""

from __future__ import annotations

import sys

import mlx.core as mx
import numpy as np
from gguf import GGML_QUANT_SIZES, GGMLQuantizationType
from gguf.quants import dequantize as gguf_dequantize

# Byte offsets of the float16 fields inside one block (gguf/quants.py's layouts). Random
# bytes there would make NaN, infinite or absurd scales; they get sane values instead.
F16_FIELDS: dict[str, tuple[int, ...]] = {
    "Q8_0": (0,), "Q4_0": (0,), "Q4_1": (0, 2), "Q5_0": (0,), "Q5_1": (0, 2),
    "Q2_K": (80, 82), "Q3_K": (108,), "Q4_K": (0, 2), "Q5_K": (0, 2), "Q6_K": (208,),
}
FLOAT_DTYPES = {"F32": np.float32, "F16": np.float16}


def random_raw(
    ggml_type: GGMLQuantizationType, rows: int, cols: int, rng: np.random.Generator
) -> np.ndarray:
    """``uint8[rows, row_bytes]``: random blocks whose float16 fields are normal(0, 0.05);
    for float types, normal(0, 1) values (BF16: float32 values truncated)."""
    name = ggml_type.name
    if name in FLOAT_DTYPES:
        return rng.normal(size=(rows, cols)).astype(FLOAT_DTYPES[name]).view(np.uint8)
    if name == "BF16":
        values = rng.normal(size=(rows, cols)).astype(np.float32)
        return (values.view(np.uint32) >> 16).astype(np.uint16).view(np.uint8)
    block_elems, block_bytes = GGML_QUANT_SIZES[ggml_type]
    n_blocks = cols // block_elems
    blocks = rng.integers(0, 256, size=(rows, n_blocks, block_bytes), dtype=np.uint8)
    for offset in F16_FIELDS[name]:
        scale = rng.normal(0.0, 0.05, size=(rows, n_blocks, 1)).astype(np.float16)
        blocks[..., offset : offset + 2] = scale.view(np.uint8)
    return blocks.reshape(rows, n_blocks * block_bytes)


def measure(
    ggml_type: GGMLQuantizationType, rows: int, cols: int, seed: int = 0
) -> dict[str, object]:
    from vexel_core.quant.formats import ALL_FORMATS

    fmt = next(f for f in ALL_FORMATS if f.ggml_type == ggml_type)
    rng = np.random.default_rng(seed)
    raw = random_raw(ggml_type, rows, cols, rng)
    reference = gguf_dequantize(raw, ggml_type).astype(np.float64)
    weight = fmt.load(raw, (rows, cols))
    x = rng.normal(size=(8, cols)).astype(np.float32)
    exact = x.astype(np.float64) @ reference.T
    scale = (np.abs(x) @ np.abs(reference).T).max()
    ours = np.array(weight.matmul(mx.array(x))).astype(np.float64)
    w16 = mx.array(reference.astype(np.float16))
    as_f16 = np.array(mx.array(x) @ w16.T.astype(mx.float32)).astype(np.float64)
    took = np.array(weight.take(mx.arange(rows)).astype(mx.float32))
    block_elems, block_bytes = GGML_QUANT_SIZES[ggml_type]
    return {
        "type": ggml_type.name,
        "file_bits": 8 * block_bytes / block_elems,
        "mlx_bits": 8 * weight.nbytes / (rows * cols),
        "f16_bits": 16.0,
        "weights_exact": bool(np.array_equal(took, reference.astype(np.float32))),
        "product_error": float(np.abs(ours - exact).max() / scale),
        "f16_product_error": float(np.abs(as_f16 - exact).max() / scale),
    }


def main(argv: list[str]) -> None:
    rows, cols = (int(a) for a in argv) if argv else (64, 4096)
    print(f"{rows}x{cols} random blocks; error = max|y - y_ref| / max(|x| @ |W|.T)")
    print(f"{'type':6} {'file':>7} {'mlx':>7} {'f16':>5} {'exact':>6} {'error':>9} {'f16 err':>9}")
    for t in GGMLQuantizationType:
        if t.name in F16_FIELDS or t.name in ("F32", "F16", "BF16"):
            m = measure(t, rows, cols)
            print(f"{m['type']:6} {m['file_bits']:7.4g} {m['mlx_bits']:7.4g} "
                  f"{m['f16_bits']:5.3g} {m['weights_exact']!s:>6} "
                  f"{m['product_error']:9.2e} {m['f16_product_error']:9.2e}")


if __name__ == "__main__":
    main(sys.argv[1:])
