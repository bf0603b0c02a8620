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


def start_engine(settings: Settings, host: PluginHost | None = None, *,
                 wait: bool = True) -> AsyncEngine:
    """Start the engine thread, which loads ``settings.model.path`` (vexel-tiny when unset).

    With *wait*, return once the model is loaded (raising its load error); otherwise at once
    (the server reports "loading" on /health meanwhile).
    """
    host = host or get_host()
    engine = AsyncEngine(lambda: LLMEngine(load_model(settings.model.path, host),
                                           settings.engine, host))
    if wait:
        try:
            engine.wait_ready()
        except BaseException:
            engine.shutdown()
            raise
    return engine
