"""Which family of Vexel's own GPU kernels runs on MLX's default device."""

from __future__ import annotations

import os

import mlx.core as mx


def kernel_backend() -> str | None:
    """"cuda" or "metal" when MLX's default device can run our kernels, else None.

    The Metal sources have never been compiled or run (no Apple machine here), so Apple GPUs
    use them only when ``VEXEL_METAL_KERNELS=1`` asks for it and take the reference paths
    otherwise.
    """
    if mx.default_device() == mx.cpu:
        return None
    if mx.cuda.is_available():
        return "cuda"
    if mx.metal.is_available() and os.environ.get("VEXEL_METAL_KERNELS") == "1":
        return "metal"
    return None
