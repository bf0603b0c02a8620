"""Vexel plugin: Google's Gemma 2 (GGUF architecture ``gemma2``)."""

from vexel_core.hookspecs import Register, hookimpl


@hookimpl
def register_architectures(register: Register) -> None:
    from vexel_gemma.gemma2 import Gemma2Architecture

    register("gemma2", Gemma2Architecture())
