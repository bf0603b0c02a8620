"""Opening a GGUF file as a runnable model: architecture lookup, weights, tokenizer."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import mlx.core as mx

from vexel_core.assets import default_model_path
from vexel_core.errors import GGUFError, RegistryMiss
from vexel_core.gguf.description import ModelDescription
from vexel_core.gguf.reader import GGUFFile
from vexel_core.logs import get_logger
from vexel_core.model.architecture import CausalLM
from vexel_core.plugins import PluginHost, get_host
from vexel_core.tokenizer import Tokenizer

log = get_logger(__name__)


@dataclass
class LoadedModel:
    path: Path
    name: str
    model: CausalLM
    tokenizer: Tokenizer
    gguf: GGUFFile
    description: ModelDescription  # the file's shapes, checked against its architecture


def load_model(path: str | Path | None, host: PluginHost | None = None) -> LoadedModel:
    """Load *path* (the shipped vexel-tiny when None) with the registered architecture."""
    host = host or get_host()
    file = Path(path) if path is not None else default_model_path()
    gguf = GGUFFile(file)
    try:
        arch = host.architectures.get(gguf.architecture)
    except RegistryMiss as miss:
        raise GGUFError(file, "key general.architecture",
                        f"architecture {gguf.architecture!r} is not supported: {miss}") from None
    description = ModelDescription.from_gguf(gguf)  # shapes consistent with the architecture
    log.info("loading model", model=str(file), architecture=gguf.architecture)
    model = arch.load(gguf, host)
    # Drop the buffers that loading freed (host-made copies of the file's bytes among them):
    # MLX's cache hands buffers out by size alone, and on CUDA a host-made (managed) buffer
    # would serve a later GPU array with page faults (`vexel_core.gpu.device_resident`).
    mx.clear_cache()
    tokenizer = Tokenizer.from_gguf(gguf)
    name = gguf.get("general.name") or file.stem
    return LoadedModel(file, str(name), model, tokenizer, gguf, description)
