"""ASGI middleware: the API key on ``/v1`` routes, and the request body size limit.

Both answer with OpenAI-shaped errors before any route runs: 401 without the right key
(``Authorization: Bearer KEY``), 413 for a body over the limit, whether the client declared
its length or streams it chunked.
"""

from __future__ import annotations

import hmac

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from vexel_core.server.errors import APIError


class APIKeyMiddleware:
    """Every path under ``/v1`` needs ``Authorization: Bearer <api_key>``."""

    def __init__(self, app: ASGIApp, api_key: str | None) -> None:
        self.app = app
        self.api_key = api_key

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if (scope["type"] != "http" or self.api_key is None
                or not (path == "/v1" or path.startswith("/v1/"))):
            await self.app(scope, receive, send)
            return
        auth = Headers(scope=scope).get("authorization", "")
        scheme, _, given = auth.partition(" ")
        if scheme.lower() != "bearer" or not given:
            error = APIError(401, "missing API key: send the header 'Authorization: Bearer "
                             "<key>'", code="invalid_api_key",
                             headers={"WWW-Authenticate": "Bearer"})
        elif not hmac.compare_digest(given.strip().encode(), self.api_key.encode()):
            error = APIError(401, "incorrect API key", code="invalid_api_key",
                             headers={"WWW-Authenticate": "Bearer"})
        else:
            await self.app(scope, receive, send)
            return
        await error.response()(scope, receive, send)


class BodyLimitMiddleware:
    """Reads the body up front, refusing it with 413 past *max_bytes*, then replays it.

    Reading first (rather than counting as the route reads) means no route ever sees part of
    an oversized body; after the body, ``receive`` is the server's own again, so routes
    still hear ``http.disconnect``.
    """

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = Headers(scope=scope).get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await self._refuse(scope, receive, send)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client left before sending it all
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                await self._refuse(scope, receive, send)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        error = APIError(413, f"the request body is larger than the limit of {self.max_bytes} "
                         "bytes (server.max_body_bytes)", code="request_too_large",
                         headers={"Connection": "close"})
        await error.response()(scope, receive, send)
