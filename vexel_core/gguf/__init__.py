"""Reading and writing GGUF files: strict parsing, memory-mapped tensors, a typed description."""

from vexel_core.gguf.description import ModelDescription
from vexel_core.gguf.reader import GGUFFile, TensorInfo
from vexel_core.gguf.writer import quantize_with_llama_cpp, write_gguf

__all__ = ["GGUFFile", "ModelDescription", "TensorInfo", "quantize_with_llama_cpp", "write_gguf"]
