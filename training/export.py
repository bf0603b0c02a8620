"""vexel-tiny models to GGUF files and back, through the project's GGUF writer and reader."""

from __future__ import annotations

from pathlib import Path

from gguf import GGMLQuantizationType, Keys
from tokenizers import Tokenizer

from training.gguf_layout import (
    ARCH,
    config_from_gguf,
    gguf_tensors,
    llama_metadata,
    model_from_gguf_tensors,
)
from training.model import TinyLlama
from training.tokenizer import GGUFVocab, from_gguf_vocab
from vexel_core.gguf import GGUFFile, write_gguf


def export_gguf(
    path: Path, model: TinyLlama, vocab: GGUFVocab, name: str,
    matrix_type: GGMLQuantizationType = GGMLQuantizationType.Q8_0,
) -> Path:
    """Write *model* with its tokenizer as a llama GGUF file (matrices in *matrix_type*)."""
    return write_gguf(path, ARCH, llama_metadata(model.config, vocab, name),
                      gguf_tensors(model), matrix_type)


def load_gguf(path: Path) -> tuple[TinyLlama, Tokenizer]:
    """A file written by `export_gguf` as a float32 MLX model and its `tokenizers` tokenizer.

    Weights are dequantized with the reference (``gguf.quants.dequantize``), so the model
    computes what the file holds, quantization error included.
    """
    with GGUFFile(path) as gguf:
        cfg = config_from_gguf(gguf)
        tensors = {name: info.dequantize() for name, info in gguf.tensors.items()}
        tokenizer = from_gguf_vocab(gguf.require(Keys.Tokenizer.LIST, list),
                                    gguf.require(Keys.Tokenizer.MERGES, list))
    return model_from_gguf_tensors(cfg, tensors), tokenizer
