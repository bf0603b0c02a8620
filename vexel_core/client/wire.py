"""What the sync and async clients share: request bodies, error decoding, SSE parsing.

Only the I/O differs between `Client` and `AsyncClient`; everything that knows the API's
shapes lives here.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from vexel_core.client.errors import APIError, error_from_response
from vexel_core.client.types import Delta, Usage

DEFAULT_URL = "http://127.0.0.1:8000"
Messages = str | Sequence[Mapping[str, Any]]


def normalize_base_url(url: str) -> str:
    """The server's root: ``http://host:port`` also when given with ``/v1``."""
    url = url.rstrip("/")
    return url[: -len("/v1")] if url.endswith("/v1") else url


def auth_headers(api_key: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}


def chat_body(messages: Messages, params: Mapping[str, Any], stream: bool) -> dict[str, Any]:
    """A chat request; a plain string is one user message."""
    if isinstance(messages, str):
        messages = [{"role": "user", "content": messages}]
    return _with_stream({"messages": list(messages), **params}, stream)


def completion_body(prompt: str | Sequence[int], params: Mapping[str, Any],
                    stream: bool) -> dict[str, Any]:
    return _with_stream({"prompt": prompt if isinstance(prompt, str) else list(prompt),
                         **params}, stream)


def _with_stream(body: dict[str, Any], stream: bool) -> dict[str, Any]:
    if stream:  # always ask for usage: streams report it at the end
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
    return body


def raise_for_error(status: int, content: bytes) -> None:
    if status < 400:
        return
    try:
        body: Any = json.loads(content)
    except ValueError:
        body = content.decode("utf-8", "replace")
    raise error_from_response(status, body)


class StreamReader:
    """Turns SSE lines into `Delta`s; keeps the response id, model, usage and the end."""

    def __init__(self) -> None:
        self.id: str | None = None
        self.model: str | None = None
        self.usage: Usage | None = None
        self.done = False

    def feed(self, line: str) -> list[Delta]:
        """The deltas in one line (blank lines and ``:`` comments have none)."""
        if not line.startswith("data:"):
            return []
        data = line[len("data:"):].strip()
        if data == "[DONE]":
            self.done = True
            return []
        event = json.loads(data)
        if "error" in event:
            fields = event["error"]
            raise APIError(str(fields.get("message")), type=fields.get("type"),
                           param=fields.get("param"), code=fields.get("code"))
        self.id = event.get("id", self.id)
        self.model = event.get("model", self.model)
        if event.get("usage"):
            self.usage = Usage.from_json(event["usage"])
        return [Delta.from_json(c) for c in event.get("choices") or []]
