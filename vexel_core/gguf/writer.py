"""Writing GGUF files: a thin layer over ``gguf.GGUFWriter`` for tests and the model exporter.

`write_gguf` takes float32 arrays and plain metadata values; it quantizes with
``gguf.quants.quantize`` (F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1) and picks each
value's GGUF type the way gguf's own ``add_*`` helpers do. The K-quants and llama.cpp's
``*_K_M`` mixes come from llama.cpp itself: `quantize_with_llama_cpp` rewrites an F32/F16
file into any of them.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
from gguf import (
    GGML_QUANT_SIZES,
    GGML_QUANT_VERSION,
    GGMLQuantizationType,
    GGUFValueType,
    GGUFWriter,
    LlamaFileType,
)
from gguf.gguf_writer import GGUFValue
from gguf.quants import quantize

T = GGMLQuantizationType
WRITABLE_TYPES = (T.F32, T.F16, T.BF16, T.Q8_0, T.Q4_0, T.Q4_1, T.Q5_0, T.Q5_1)

TensorTypes = GGMLQuantizationType | Callable[[str, np.ndarray], GGMLQuantizationType]

# The few integer keys gguf writes as int32; every other integer key it writes as uint32.
_INT32_KEYS = frozenset({
    "general.sampling.top_k",
    "general.sampling.penalty_last_n",
    "general.sampling.mirostat",
    "split.tensors.count",
})
_INT32_RANGE = range(-(2**31), 2**31)
_UINT32_RANGE = range(2**32)


def write_gguf(
    path: str | os.PathLike[str],
    arch: str,
    metadata: Mapping[str, Any],
    tensors: Mapping[str, np.ndarray],
    tensor_types: TensorTypes = T.F32,
) -> Path:
    """Write a GGUF file and return its path.

    *metadata* maps keys to str, int, float, bool or a non-empty list of one of those (see
    `gguf_value`); a ``gguf.gguf_writer.GGUFValue`` gives an explicit type instead.
    ``general.architecture`` is *arch*; ``general.file_type`` and
    ``general.quantization_version`` are added unless given. *tensors* are float arrays in
    numpy order (rows first). *tensor_types* is one type for every matrix or a function
    ``(name, array) -> type``; vectors (norms, biases) are always written as F32.
    Raises ValueError for a type gguf cannot write or a row length that is not a multiple of
    the type's block size.
    """
    chosen = {name: _tensor_type(name, array, tensor_types) for name, array in tensors.items()}
    writer = GGUFWriter(os.fspath(path), arch)
    for key, value in metadata.items():
        if key == "general.architecture":
            if value != arch:
                raise ValueError(f"metadata general.architecture {value!r} differs from {arch!r}")
            continue
        typed = value if isinstance(value, GGUFValue) else gguf_value(key, value)
        writer.add_key_value(key, typed.value, typed.type, sub_type=typed.sub_type)
    if "general.file_type" not in metadata:
        writer.add_uint32("general.file_type", _file_type(tensors, chosen))
    if "general.quantization_version" not in metadata:
        writer.add_uint32("general.quantization_version", GGML_QUANT_VERSION)
    for name, array in tensors.items():
        ggml_type = chosen[name]
        data = quantize(np.asarray(array, dtype=np.float32), ggml_type)
        writer.add_tensor(name, data, raw_dtype=ggml_type)
    finish(writer)
    return Path(path)


def finish(writer: GGUFWriter) -> None:
    """Write everything a `GGUFWriter` has collected (header, key-values, tensors), then
    close its file, also when writing fails."""
    try:
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_tensors_to_file()
    finally:
        writer.close()


def gguf_value(key: str, value: Any) -> GGUFValue:
    """The GGUF type a plain Python value is written as.

    str -> STRING; bool -> BOOL; float -> FLOAT32; int -> UINT32 (INT32 for the few keys gguf
    writes signed, or a negative value; 64-bit when it does not fit); lists -> ARRAY of the
    element type, where integers are INT32 as ``gguf.GGUFWriter.add_array`` writes them
    (``tokenizer.ggml.token_type``).
    """
    if isinstance(value, (list, tuple)):
        if not value:
            raise ValueError(f"metadata {key}: an empty list has no element type")
        kinds = {_kind(v) for v in value}
        if len(kinds) != 1:
            raise ValueError(f"metadata {key}: list mixes {sorted(k.__name__ for k in kinds)}")
        kind = kinds.pop()
        if kind is int:
            item = GGUFValueType.INT32 if all(v in _INT32_RANGE for v in value) \
                else GGUFValueType.INT64
        else:
            item = _SCALAR_TYPES[kind]
        return GGUFValue(list(value), GGUFValueType.ARRAY, item)
    kind = _kind(value)
    if kind is not int:
        return GGUFValue(value, _SCALAR_TYPES[kind])
    if key in _INT32_KEYS or value < 0:
        vtype = GGUFValueType.INT32 if value in _INT32_RANGE else GGUFValueType.INT64
    else:
        vtype = GGUFValueType.UINT32 if value in _UINT32_RANGE else GGUFValueType.UINT64
    return GGUFValue(value, vtype)


_SCALAR_TYPES: dict[type, GGUFValueType] = {
    str: GGUFValueType.STRING,
    bool: GGUFValueType.BOOL,
    float: GGUFValueType.FLOAT32,
}


def _kind(value: Any) -> type:
    for kind in (bool, int, float, str):  # bool first: it is also an int
        if isinstance(value, kind):
            return kind
    raise ValueError(f"metadata value {value!r} of type {type(value).__name__} is not "
                     "str, int, float, bool or a list of one of those")


def _tensor_type(name: str, array: np.ndarray, choice: TensorTypes) -> GGMLQuantizationType:
    if array.ndim < 2:
        return T.F32  # norms and biases stay exact, as llama.cpp keeps them
    ggml_type = choice if isinstance(choice, GGMLQuantizationType) else choice(name, array)
    if ggml_type not in WRITABLE_TYPES:
        raise ValueError(
            f"tensor {name}: gguf.quants cannot write {ggml_type.name} (it writes "
            f"{', '.join(t.name for t in WRITABLE_TYPES)}); write F32 or F16 and convert "
            "with quantize_with_llama_cpp"
        )
    block = GGML_QUANT_SIZES[ggml_type][0]
    if array.shape[-1] % block:
        raise ValueError(
            f"tensor {name}: row length {array.shape[-1]} is not a multiple of the "
            f"{ggml_type.name} block size {block}"
        )
    return ggml_type


def _file_type(tensors: Mapping[str, np.ndarray], chosen: Mapping[str, T]) -> int:
    """llama.cpp's ``general.file_type``: the type holding most of the matrices' weights."""
    weight: dict[T, int] = {}
    for name, array in tensors.items():
        if np.ndim(array) >= 2:
            weight[chosen[name]] = weight.get(chosen[name], 0) + int(np.size(array))
    if not weight:
        return int(LlamaFileType.ALL_F32)
    main = max(weight, key=lambda t: weight[t])
    if main == T.F32:
        return int(LlamaFileType.ALL_F32)
    return int(LlamaFileType[f"MOSTLY_{main.name}"])


def quantize_with_llama_cpp(
    src: str | os.PathLike[str], dst: str | os.PathLike[str], ftype_name: str
) -> Path:
    """Let llama.cpp rewrite the F32/F16 file *src* as *ftype_name* at *dst*; return *dst*.

    *ftype_name* is a llama.cpp file type without its prefix: ``"Q4_K_M"``, ``"Q6_K"``,
    ``"Q2_K"``, ``"Q8_0"``, ``"F16"``, ... (``LLAMA_FTYPE_MOSTLY_<name>``, or ``"F32"``).
    Rows whose length is not a multiple of 256 fall back from K-quants to Q5_0/Q8_0, as in
    llama.cpp. Needs ``llama_cpp`` (a test dependency), imported only here.
    """
    import ctypes

    import llama_cpp

    llama_log = logging.getLogger("llama-cpp-python")  # llama.cpp logs every tensor otherwise

    attr = "LLAMA_FTYPE_ALL_F32" if ftype_name == "F32" else f"LLAMA_FTYPE_MOSTLY_{ftype_name}"
    ftype = getattr(llama_cpp, attr, None)
    if not isinstance(ftype, int):
        known = sorted(n.removeprefix("LLAMA_FTYPE_MOSTLY_") for n in dir(llama_cpp)
                       if n.startswith("LLAMA_FTYPE_MOSTLY_"))
        raise ValueError(f"unknown llama.cpp file type {ftype_name!r}; known: {', '.join(known)}")
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = ftype
    old_level = llama_log.level
    llama_log.setLevel(logging.ERROR)
    try:
        status = llama_cpp.llama_model_quantize(
            os.fsencode(src), os.fsencode(dst), ctypes.byref(params)
        )
    finally:
        llama_log.setLevel(old_level)
    if status != 0:
        raise RuntimeError(f"llama.cpp could not quantize {src} to {ftype_name} (status {status})")
    return Path(dst)
