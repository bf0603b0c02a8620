"""Requests in, tokens out: scheduler, model runner, and the async engine around them."""

from __future__ import annotations

from vexel_core.config import Settings
from vexel_core.engine.async_engine import AsyncEngine
from vexel_core.engine.core import LLMEngine
from vexel_core.engine.loader import LoadedModel, load_model
from vexel_core.engine.request import FinishReason, GenerationRequest, RequestOutput
from vexel_core.plugins import PluginHost, get_host

__all__ = [
    "AsyncEngine",
    "FinishReason",
    "GenerationRequest",
    "LLMEngine",
    "LoadedModel",
    "RequestOutput",
    "load_model",
    "start_engine",
]


def start_engine(settings: Settings, host: PluginHost | None = None,
                 loaded: LoadedModel | None = None) -> AsyncEngine:
    """Load ``settings.model.path`` (or use *loaded*) and start its engine thread."""
    host = host or get_host()
    loaded = loaded or load_model(settings.model.path, host)
    return AsyncEngine(LLMEngine(loaded, settings.engine, host))
