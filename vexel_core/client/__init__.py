"""A Python client for ``vexel serve`` (any OpenAI-compatible server works), on httpx.

    from vexel_core.client import Client

    with Client("http://127.0.0.1:8000", api_key=None) as client:
        client.wait_until_ready()
        print(client.chat("Hello!", max_tokens=32).text)
        for delta in client.chat_stream([{"role": "user", "content": "Hi"}], temperature=0):
            print(delta.text, end="", flush=True)

`AsyncClient` has the same methods for asyncio. Errors are `APIError` subclasses chosen by
HTTP status (`BadRequestError`, `AuthenticationError`, `NotFoundError`, ...); an unreachable
server raises `APIConnectionError`. The client speaks HTTP only: it imports nothing of the
engine.
"""

from vexel_core.client.async_client import AsyncClient, AsyncCompletionStream
from vexel_core.client.errors import (
    APIConnectionError,
    APIError,
    AuthenticationError,
    BadRequestError,
    NotFoundError,
    RequestTooLargeError,
    ServerError,
    ServiceUnavailableError,
)
from vexel_core.client.sync_client import Client, CompletionStream
from vexel_core.client.types import Choice, Completion, Delta, Model, TokenLogprob, Usage

__all__ = [
    "APIConnectionError",
    "APIError",
    "AsyncClient",
    "AsyncCompletionStream",
    "AuthenticationError",
    "BadRequestError",
    "Choice",
    "Client",
    "Completion",
    "CompletionStream",
    "Delta",
    "Model",
    "NotFoundError",
    "RequestTooLargeError",
    "ServerError",
    "ServiceUnavailableError",
    "TokenLogprob",
    "Usage",
]
