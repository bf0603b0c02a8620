"""Shared fixtures. GPU tests are skipped unless MLX runs on a GPU backend."""

from __future__ import annotations

import mlx.core as mx
import pytest


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
