"""Vexel: a local LLM inference engine on MLX."""

import os

# An F32 file computes in float32 (model.metadata.activation_dtype), and that must hold for its
# matrix products too: MLX otherwise runs float32 products at reduced precision on matrix units
# (TF32 on CUDA, 11 significant bits; the neural accelerators of newer Apple GPUs), ~1e-3
# relative error. MLX reads the setting once, at its first such product: set here, before any
# model exists. A user's own MLX_ENABLE_TF32 stands. Products in float16 or bfloat16 are
# unaffected; the other float32 ones (K-quants' terms that cancel: quant.weights) want it too.
os.environ.setdefault("MLX_ENABLE_TF32", "0")

from vexel_core.hookspecs import hookimpl  # noqa: E402

__version__ = "0.1.0"
__all__ = ["__version__", "hookimpl"]
