"""The ASGI application and the uvicorn server around it.

`create_app` builds a Starlette app whose lifespan loads the model in a worker thread and
warms it up (`AsyncEngine.warm_up`): the server accepts connections at once, ``/health``
answers 503 until the engine runs, and shutdown stops the engine after uvicorn has let open
requests finish. `VexelServer` binds a socket (port 0 picks a free one) and runs uvicorn on
it: ``vexel serve`` and the tests use it alike.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from typing import Any

import uvicorn
from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response

from vexel_core.config import Settings
from vexel_core.engine import AsyncEngine, start_engine
from vexel_core.errors import VexelError
from vexel_core.logs import get_logger
from vexel_core.server.errors import APIError, api_error_from
from vexel_core.server.metrics import MetricsExporter
from vexel_core.server.middleware import APIKeyMiddleware, BodyLimitMiddleware
from vexel_core.server.routes import ROUTES

log = get_logger(__name__)

EngineFactory = Callable[[], AsyncEngine]


class ServerState:
    """What the routes share: the engine (once loaded), the served name, the metrics."""

    def __init__(self, settings: Settings, engine_factory: EngineFactory,
                 on_ready: Callable[[ServerState], None] | None = None,
                 on_load_failure: Callable[[BaseException], None] | None = None) -> None:
        self.settings = settings
        self.engine_factory = engine_factory
        self.on_ready = on_ready
        self.on_load_failure = on_load_failure
        self.metrics = MetricsExporter()
        self.engine: AsyncEngine | None = None
        self.load_error: BaseException | None = None
        self.model_id = ""
        self.model_aliases: frozenset[str] = frozenset()
        self.created = int(time.time())
        self._loader: asyncio.Task[None] | None = None

    # -- lifecycle --------------------------------------------------------------------------
    def start_loading(self) -> None:
        self._loader = asyncio.create_task(self._load())

    async def _load(self) -> None:
        engine: AsyncEngine | None = None
        try:
            engine = await asyncio.to_thread(self.engine_factory)
            if self.settings.server.warm_up:
                started = time.perf_counter()
                await engine.warm_up()
                log.info("warmed up", seconds=round(time.perf_counter() - started, 2))
        except Exception as exc:
            if engine is not None:  # loaded, but its warm-up failed: real requests would too
                await asyncio.to_thread(engine.shutdown)
            self.load_error = exc
            # our own errors name the file and the problem; anything else is a bug: trace it
            log.error("model failed to load", error=str(exc),
                      exc_info=not isinstance(exc, VexelError))
            if self.on_load_failure is not None:
                self.on_load_failure(exc)
            return
        loaded = engine.engine.loaded
        self.model_id = self.settings.model.name or loaded.name
        self.model_aliases = frozenset({self.model_id, loaded.path.name, loaded.path.stem})
        self.metrics.attach(engine.stats, self.model_id)
        self.engine = engine
        log.info("model ready", model=self.model_id, context_len=engine.engine.context_len)
        if self.on_ready is not None:
            self.on_ready(self)

    async def close(self) -> None:
        """Stop the engine (after uvicorn has let open requests finish or cancelled them)."""
        if self._loader is not None:
            await self._loader  # a thread cannot be cancelled: let the load end first
        if self.engine is not None:
            await asyncio.to_thread(self.engine.shutdown)
            self.engine = None
            log.info("engine stopped")

    # -- what routes ask --------------------------------------------------------------------
    def ready(self) -> AsyncEngine:
        if self.engine is not None:
            return self.engine
        if self.load_error is not None:
            raise APIError(503, f"the model failed to load: {self.load_error}",
                           type="server_error", code="model_load_failed")
        raise APIError(503, "the model is still loading; retry when /health answers 200",
                       type="server_error", code="model_loading",
                       headers={"Retry-After": "1"})

    def check_model(self, requested: str | None) -> str:
        """The served model's id; 404 when *requested* names another model."""
        if requested is None or requested in self.model_aliases:
            return self.model_id
        raise APIError(404, f"the model {requested!r} does not exist; this server serves "
                       f"{self.model_id!r}", param="model", code="model_not_found")

    def model_card(self) -> dict[str, Any]:
        assert self.engine is not None
        return {"id": self.model_id, "object": "model", "created": self.created,
                "owned_by": "vexel", "max_model_len": self.engine.engine.context_len}


async def _api_error(request: Request, exc: Exception) -> Response:
    error = api_error_from(exc)
    if error.status >= 500:
        log.error("request failed", path=request.url.path, error=repr(exc))
    return error.response()


async def _http_error(request: Request, exc: Exception) -> Response:
    """Starlette's own 404/405 (no such route or method), shaped like OpenAI's errors."""
    assert isinstance(exc, HTTPException)
    code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code)
    message = (f"no route {request.method} {request.url.path}" if exc.status_code == 404
               else f"{exc.detail}: {request.method} {request.url.path}")
    return APIError(exc.status_code, message, code=code, headers=exc.headers).response()


def create_app(settings: Settings, engine_factory: EngineFactory | None = None, *,
               on_ready: Callable[[ServerState], None] | None = None,
               on_load_failure: Callable[[BaseException], None] | None = None) -> Starlette:
    """The OpenAI-compatible app; *engine_factory* (default: `start_engine(settings)`) runs
    in a worker thread when the app starts. ``app.state.vexel`` is its `ServerState`."""
    state = ServerState(settings, engine_factory or (lambda: start_engine(settings)),
                        on_ready, on_load_failure)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        state.start_loading()
        try:
            yield
        finally:
            await state.close()

    server = settings.server
    app = Starlette(
        routes=ROUTES,
        middleware=[  # outermost first: no body is read for a caller without the key
            Middleware(APIKeyMiddleware, api_key=server.api_key),
            Middleware(BodyLimitMiddleware, max_bytes=server.max_body_bytes),
        ],
        exception_handlers={
            APIError: _api_error, ValidationError: _api_error, VexelError: _api_error,
            HTTPException: _http_error, Exception: _api_error,
        },
        lifespan=lifespan,
    )
    app.state.vexel = state
    return app


class _Uvicorn(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        """SIGINT/SIGTERM start a graceful shutdown, as in uvicorn — which afterwards raises
        the signal again, so a cleanly stopped server would die by it; we return instead."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        previous = {sig: signal.signal(sig, self.handle_exit)
                    for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


class VexelServer:
    """uvicorn serving `create_app` on a socket bound at construction (so `url` is known,
    even for port 0). `run` blocks until shutdown (SIGINT/SIGTERM in the main thread, or
    `stop`) and raises the model's load error, if it had one."""

    def __init__(self, settings: Settings, engine_factory: EngineFactory | None = None, *,
                 on_ready: Callable[[ServerState], None] | None = None) -> None:
        self.app = create_app(settings, engine_factory, on_ready=on_ready,
                              on_load_failure=lambda exc: self.stop())
        self.state: ServerState = self.app.state.vexel
        self.config = uvicorn.Config(
            self.app, host=settings.server.host, port=settings.server.port,
            log_config=None,  # uvicorn's records go through our logging setup
            lifespan="on",
            timeout_graceful_shutdown=settings.server.graceful_shutdown_seconds,
        )
        self.server = _Uvicorn(self.config)
        self.socket = self.config.bind_socket()

    @property
    def url(self) -> str:
        host, port = self.socket.getsockname()[:2]
        return f"http://{f'[{host}]' if ':' in host else host}:{port}"

    def run(self) -> None:
        try:
            self.server.run(sockets=[self.socket])
        finally:
            self.socket.close()
        if self.state.load_error is not None:
            raise self.state.load_error

    def stop(self) -> None:
        self.server.should_exit = True
