"""Server-sent events framed exactly as OpenAI's API frames them.

Each chunk is ``data: {json}\\n\\n``; the stream ends with ``data: [DONE]\\n\\n``; a quiet
stream (a long prompt being processed, a queue) carries ``: keep-alive\\n\\n`` comments,
which SSE clients ignore and proxies take as life. An error after the response has started
becomes one ``data:`` event holding an OpenAI error object, then ``[DONE]``.

When the client goes away, Starlette cancels the response's iterator; its ``finally`` closes
the `OutputStream`, which aborts the engine requests.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any, Protocol

from starlette.responses import StreamingResponse

from vexel_core.engine import RequestOutput
from vexel_core.logs import get_logger
from vexel_core.server.errors import api_error_from
from vexel_core.server.streams import IDLE, OutputStream

log = get_logger(__name__)

KEEPALIVE = b": keep-alive\n\n"
DONE = b"data: [DONE]\n\n"


def event(payload: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(payload, ensure_ascii=False,
                                  separators=(",", ":")).encode() + b"\n\n"


class ChunkFormat(Protocol):
    """Turns a request's outputs into stream chunks (see `openai_format`)."""

    def opening_chunks(self) -> list[dict[str, Any]]: ...
    def chunks(self, out: RequestOutput) -> list[dict[str, Any]]: ...
    def closing_chunks(self) -> list[dict[str, Any]]: ...


async def _events(stream: OutputStream, fmt: ChunkFormat) -> AsyncIterator[bytes]:
    try:
        for chunk in fmt.opening_chunks():
            yield event(chunk)
        async for item in stream.items():
            if item is IDLE:
                yield KEEPALIVE
                continue
            for chunk in fmt.chunks(item):  # type: ignore[arg-type]  # not IDLE here
                yield event(chunk)
        for chunk in fmt.closing_chunks():
            yield event(chunk)
    except Exception as exc:  # the headers are sent: report it inside the stream
        error = api_error_from(exc)
        if error.status >= 500:
            log.error("stream failed", error=repr(exc))
        yield event(error.body())
    finally:
        stream.close()
    yield DONE


class EventStreamResponse(StreamingResponse):
    media_type = "text/event-stream"

    def __init__(self, stream: OutputStream, fmt: ChunkFormat) -> None:
        # no-cache and X-Accel-Buffering: proxies must pass each event on as it comes.
        super().__init__(_events(stream, fmt),
                         headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
