"""Vexel plugin: Microsoft's Phi-2 and Phi-3 (GGUF architectures ``phi2`` and ``phi3``)."""

from vexel_core.hookspecs import Register, hookimpl


@hookimpl
def register_architectures(register: Register) -> None:
    from vexel_phi.phi2 import Phi2Architecture
    from vexel_phi.phi3 import Phi3Architecture

    register("phi2", Phi2Architecture())
    register("phi3", Phi3Architecture())
