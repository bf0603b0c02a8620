"""The built-in plugin: quant formats, attention backends and samplers shipped with the core.

Registered through the same hooks and the same entry-point group as any third-party plugin
(``core = "vexel_core.builtins"`` in pyproject.toml).
"""

from __future__ import annotations

from vexel_core.hookspecs import Register, hookimpl


@hookimpl
def register_quant_formats(register: Register) -> None:
    from vexel_core.quant.formats import ALL_FORMATS

    for fmt in ALL_FORMATS:
        register(fmt)


@hookimpl
def register_attention_backends(register: Register) -> None:
    from vexel_core.attention.backends import BACKENDS

    for backend in BACKENDS:
        register(backend)


@hookimpl
def register_samplers(register: Register) -> None:
    from vexel_core.sampling.processors import PROCESSORS

    for processor in PROCESSORS:
        register(processor)
