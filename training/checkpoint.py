"""Float16 safetensors checkpoints, sharded so no file passes a size cap.

The GPU run brings its weights back in files of at most 16 MiB; keeping them lets the GGUF
export be redone on any machine without training again.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import cast

import mlx.core as mx

from training.model import LlamaConfig, TinyLlama
from vexel_core.errors import VexelError

DEFAULT_SHARD_BYTES = 15 * 2**20


def save_checkpoint(
    model: TinyLlama, directory: Path, stem: str, max_shard_bytes: int = DEFAULT_SHARD_BYTES
) -> list[Path]:
    """Write ``<stem>-NN.safetensors`` shards (float16) and return their paths."""
    shards: list[dict[str, mx.array]] = [{}]
    size = 0
    for name, param in model.named_parameters():
        nbytes = param.size * 2
        if size and size + nbytes > max_shard_bytes:
            shards.append({})
            size = 0
        shards[-1][name] = param.astype(mx.float16)
        size += nbytes
    meta = {"config": json.dumps(model.config.to_dict()), "shards": str(len(shards))}
    paths = []
    for i, arrays in enumerate(shards):
        path = directory / f"{stem}-{i:02d}.safetensors"
        mx.save_safetensors(str(path), arrays, metadata=meta)
        paths.append(path)
    return paths


def load_checkpoint(directory: Path, stem: str) -> TinyLlama:
    paths = sorted(directory.glob(f"{stem}-*.safetensors"))
    if not paths:
        raise VexelError(f"no checkpoint {stem}-*.safetensors in {directory}")
    weights: dict[str, mx.array] = {}
    config: LlamaConfig | None = None
    for path in paths:
        arrays, meta = cast(tuple[dict[str, mx.array], dict[str, str]],
                            mx.load(str(path), return_metadata=True))
        config = LlamaConfig(**json.loads(meta["config"]))
        if int(meta["shards"]) != len(paths):
            raise VexelError(f"{path}: expected {meta['shards']} shards, found {len(paths)}")
        weights.update({k: v.astype(mx.float32) for k, v in arrays.items()})
    assert config is not None
    model = TinyLlama(config)
    model.load_weights(list(weights.items()), strict=True)
    return model
