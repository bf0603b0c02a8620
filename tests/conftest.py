"""Shared fixtures. GPU tests are skipped unless MLX runs on a GPU backend."""

from __future__ import annotations

from pathlib import Path

import mlx.core as mx
import numpy as np
import pytest

from tests import emulation
from tests.helpers import fresh_seed
from vexel_core.plugins import PluginHost, load_plugins

QUANT_KERNELS = Path(__file__).parent.parent / "vexel_core" / "quant" / "kernels"


def _has_gpu() -> bool:
    try:
        return bool(mx.metal.is_available()) or bool(mx.cuda.is_available())
    except Exception:
        return False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if _has_gpu():
        return
    skip = pytest.mark.skip(reason="needs MLX on a GPU (CUDA or Metal); run on the GPU machine")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def rng() -> np.random.Generator:
    """A generator with a fresh seed each run (`fresh_seed`: printed, replayable)."""
    return np.random.default_rng(fresh_seed("rng seed"))


@pytest.fixture(scope="module")
def host() -> PluginHost:
    """Every installed plugin, strictly loaded (a broken one fails the test)."""
    return load_plugins(strict=True)


@pytest.fixture(scope="session")
def emulator(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tests/kernel_emulation/run_kernels.cpp (the CUDA GGUF kernels on the CPU), built once
    for the quantized-kernel tests."""
    return emulation.build(tmp_path_factory.mktemp("emulation"), "run_kernels.cpp",
                           [QUANT_KERNELS / "cuda", QUANT_KERNELS / "common"])
