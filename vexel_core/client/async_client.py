"""`AsyncClient`: the asyncio client (httpx.AsyncClient underneath); the same API as
`Client`, with ``await`` and ``async for``."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Sequence
from types import TracebackType
from typing import Any

import httpx

from vexel_core.client.errors import APIConnectionError
from vexel_core.client.types import Completion, Delta, Model, Usage
from vexel_core.client.wire import (
    DEFAULT_URL,
    Messages,
    StreamReader,
    auth_headers,
    chat_body,
    completion_body,
    normalize_base_url,
    raise_for_error,
)


class AsyncCompletionStream:
    """The deltas of a streamed answer (``async for``); `usage` is set at the end.
    Leaving the loop early (or `aclose`) closes the connection: the server aborts."""

    def __init__(self, response: httpx.Response) -> None:
        self._response = response
        self._reader = StreamReader()

    @property
    def id(self) -> str | None:
        return self._reader.id

    @property
    def usage(self) -> Usage | None:
        return self._reader.usage

    async def __aiter__(self) -> AsyncIterator[Delta]:
        try:
            async for line in self._response.aiter_lines():
                for delta in self._reader.feed(line):
                    yield delta
                if self._reader.done:
                    return
        except httpx.TransportError as err:
            raise APIConnectionError(f"the stream broke off: {err}") from None
        finally:
            await self.aclose()

    async def text(self) -> str:
        """Read to the end; the first choice's whole text."""
        return "".join([d.text async for d in self if d.index == 0])

    async def aclose(self) -> None:
        await self._response.aclose()

    async def __aenter__(self) -> AsyncCompletionStream:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class AsyncClient:
    """The asyncio twin of `vexel_core.client.Client` (same methods and parameters)."""

    def __init__(self, base_url: str = DEFAULT_URL, *, api_key: str | None = None,
                 timeout: float = 600.0) -> None:
        self.base_url = normalize_base_url(base_url)
        self._http = httpx.AsyncClient(base_url=self.base_url, headers=auth_headers(api_key),
                                       timeout=timeout)

    # -- plumbing ---------------------------------------------------------------------------
    async def _send(self, method: str, path: str, body: dict[str, Any] | None = None
                    ) -> httpx.Response:
        try:
            response = await self._http.request(method, path, json=body)
        except httpx.TransportError as err:
            raise APIConnectionError(f"cannot reach {self.base_url}: {err}") from None
        raise_for_error(response.status_code, response.content)
        return response

    async def _request(self, method: str, path: str, body: dict[str, Any] | None = None
                       ) -> Any:
        return (await self._send(method, path, body)).json()

    async def _stream(self, path: str, body: dict[str, Any]) -> AsyncCompletionStream:
        try:
            response = await self._http.send(self._http.build_request("POST", path, json=body),
                                             stream=True)
        except httpx.TransportError as err:
            raise APIConnectionError(f"cannot reach {self.base_url}: {err}") from None
        if response.status_code >= 400:
            content = await response.aread()
            await response.aclose()
            raise_for_error(response.status_code, content)
        return AsyncCompletionStream(response)

    # -- the API ----------------------------------------------------------------------------
    async def models(self) -> list[Model]:
        return [Model.from_json(m) for m in (await self._request("GET", "/v1/models"))["data"]]

    async def chat(self, messages: Messages, **params: Any) -> Completion:
        return Completion.from_json(await self._request(
            "POST", "/v1/chat/completions", chat_body(messages, params, False)))

    async def chat_stream(self, messages: Messages, **params: Any) -> AsyncCompletionStream:
        return await self._stream("/v1/chat/completions", chat_body(messages, params, True))

    async def complete(self, prompt: str | Sequence[int], **params: Any) -> Completion:
        return Completion.from_json(await self._request(
            "POST", "/v1/completions", completion_body(prompt, params, False)))

    async def complete_stream(self, prompt: str | Sequence[int], **params: Any
                              ) -> AsyncCompletionStream:
        return await self._stream("/v1/completions", completion_body(prompt, params, True))

    async def tokenize(self, text: str, *, add_special_tokens: bool = True) -> list[int]:
        body = {"prompt": text, "add_special_tokens": add_special_tokens}
        return list((await self._request("POST", "/tokenize", body))["tokens"])

    async def detokenize(self, tokens: Sequence[int]) -> str:
        return str((await self._request("POST", "/detokenize",
                                        {"tokens": list(tokens)}))["prompt"])

    async def is_ready(self) -> bool:
        try:
            return (await self._http.get("/health")).status_code == 200
        except httpx.TransportError:
            return False

    async def wait_until_ready(self, timeout: float = 60.0, interval: float = 0.1) -> None:
        deadline = time.monotonic() + timeout
        while not await self.is_ready():
            if time.monotonic() >= deadline:
                raise APIConnectionError(f"{self.base_url} was not ready after {timeout:g} s")
            await asyncio.sleep(interval)

    async def metrics(self) -> str:
        return (await self._send("GET", "/metrics")).text

    # -- lifetime ---------------------------------------------------------------------------
    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.aclose()
