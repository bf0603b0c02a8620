"""Vexel: a local LLM inference engine on MLX."""

from vexel_core.hookspecs import hookimpl

__version__ = "0.1.0"
__all__ = ["__version__", "hookimpl"]
