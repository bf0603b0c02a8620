"""Vexel plugin: LLaMA 2/3 and Mistral (GGUF ``general.architecture = "llama"``)."""

from vexel_core.hookspecs import Register, hookimpl


@hookimpl
def register_architectures(register: Register) -> None:
    from vexel_llama.model import LlamaArchitecture

    register("llama", LlamaArchitecture())
