"""`Client`: the blocking client (httpx.Client underneath)."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
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


class CompletionStream:
    """The deltas of a streamed answer, as they arrive; `usage` is set at the end.

    Leaving the loop early (or `close`) closes the connection, which makes the server abort
    the request.
    """

    def __init__(self, response: httpx.Response) -> None:
        self._response = response
        self._reader = StreamReader()

    @property
    def id(self) -> str | None:
        return self._reader.id

    @property
    def usage(self) -> Usage | None:
        return self._reader.usage

    def __iter__(self) -> Iterator[Delta]:
        try:
            for line in self._response.iter_lines():
                yield from self._reader.feed(line)
                if self._reader.done:
                    return
        except httpx.TransportError as err:
            raise APIConnectionError(f"the stream broke off: {err}") from None
        finally:
            self.close()

    def text(self) -> str:
        """Read to the end; the first choice's whole text."""
        return "".join(d.text for d in self if d.index == 0)

    def close(self) -> None:
        self._response.close()

    def __enter__(self) -> CompletionStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Client:
    """A blocking client for a Vexel (or any OpenAI-compatible) server.

    Generation methods take OpenAI's parameters as keywords (``max_tokens``, ``temperature``,
    ``top_p``, ``seed``, ``stop``, ``n``, ``logprobs``, ...) plus Vexel's extensions
    (``top_k``, ``min_p``, ``repetition_penalty``, ``ignore_eos``, ``return_token_ids``).
    Errors are `vexel_core.client.errors` exceptions, by HTTP status.
    """

    def __init__(self, base_url: str = DEFAULT_URL, *, api_key: str | None = None,
                 timeout: float = 600.0) -> None:
        self.base_url = normalize_base_url(base_url)
        self._http = httpx.Client(base_url=self.base_url, headers=auth_headers(api_key),
                                  timeout=timeout)

    # -- plumbing ---------------------------------------------------------------------------
    def _send(self, method: str, path: str, body: dict[str, Any] | None = None
              ) -> httpx.Response:
        try:
            response = self._http.request(method, path, json=body)
        except httpx.TransportError as err:
            raise APIConnectionError(f"cannot reach {self.base_url}: {err}") from None
        raise_for_error(response.status_code, response.content)
        return response

    def _request(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        return self._send(method, path, body).json()

    def _stream(self, path: str, body: dict[str, Any]) -> CompletionStream:
        try:
            response = self._http.send(self._http.build_request("POST", path, json=body),
                                       stream=True)
        except httpx.TransportError as err:
            raise APIConnectionError(f"cannot reach {self.base_url}: {err}") from None
        if response.status_code >= 400:
            content = response.read()
            response.close()
            raise_for_error(response.status_code, content)
        return CompletionStream(response)

    # -- the API ----------------------------------------------------------------------------
    def models(self) -> list[Model]:
        return [Model.from_json(m) for m in self._request("GET", "/v1/models")["data"]]

    def chat(self, messages: Messages, **params: Any) -> Completion:
        """One answer to *messages* (a list of {role, content}, or a user message string)."""
        return Completion.from_json(
            self._request("POST", "/v1/chat/completions", chat_body(messages, params, False)))

    def chat_stream(self, messages: Messages, **params: Any) -> CompletionStream:
        return self._stream("/v1/chat/completions", chat_body(messages, params, True))

    def complete(self, prompt: str | Sequence[int], **params: Any) -> Completion:
        """A continuation of *prompt* (text, or token ids)."""
        return Completion.from_json(
            self._request("POST", "/v1/completions", completion_body(prompt, params, False)))

    def complete_stream(self, prompt: str | Sequence[int], **params: Any) -> CompletionStream:
        return self._stream("/v1/completions", completion_body(prompt, params, True))

    def tokenize(self, text: str, *, add_special_tokens: bool = True) -> list[int]:
        body = {"prompt": text, "add_special_tokens": add_special_tokens}
        return list(self._request("POST", "/tokenize", body)["tokens"])

    def detokenize(self, tokens: Sequence[int]) -> str:
        return str(self._request("POST", "/detokenize", {"tokens": list(tokens)})["prompt"])

    def is_ready(self) -> bool:
        """Whether ``/health`` answers 200 (the model is loaded)."""
        try:
            return self._http.get("/health").status_code == 200
        except httpx.TransportError:
            return False

    def wait_until_ready(self, timeout: float = 60.0, interval: float = 0.1) -> None:
        """Block until the server is up with its model loaded; `APIConnectionError` after
        *timeout* seconds."""
        deadline = time.monotonic() + timeout
        while not self.is_ready():
            if time.monotonic() >= deadline:
                raise APIConnectionError(f"{self.base_url} was not ready after {timeout:g} s")
            time.sleep(interval)

    def metrics(self) -> str:
        """The Prometheus text of ``/metrics``."""
        return self._send("GET", "/metrics").text

    # -- lifetime ---------------------------------------------------------------------------
    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

