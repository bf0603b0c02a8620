"""Exceptions for what a server answers (by HTTP status) and for not reaching it at all.

They are `VexelError`s, so the ``vexel`` command prints them as one line.
"""

from __future__ import annotations

from typing import Any

from vexel_core.errors import VexelError


class APIError(VexelError):
    """The server answered with an error object (``{"error": {message, type, param, code}}``)
    or broke off a stream with one; *status* is None for an error inside a stream."""

    def __init__(self, message: str, *, status: int | None = None, type: str | None = None,
                 param: str | None = None, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.type = type
        self.param = param
        self.code = code

    def __str__(self) -> str:
        where = f" (param {self.param})" if self.param else ""
        status = f"{self.status} " if self.status else ""
        return f"{status}{self.message}{where}"


class BadRequestError(APIError):
    """400: invalid parameters, or a prompt over the context (code context_length_exceeded)."""


class AuthenticationError(APIError):
    """401: the API key is missing or wrong."""


class NotFoundError(APIError):
    """404: no such model or route."""


class RequestTooLargeError(APIError):
    """413: the request body is over the server's limit."""


class ServerError(APIError):
    """5xx: the server failed."""


class ServiceUnavailableError(ServerError):
    """503: the model is still loading (or failed to load)."""


class APIConnectionError(APIError):
    """The server could not be reached, or did not become ready in time."""


_BY_STATUS: dict[int, type[APIError]] = {
    400: BadRequestError, 401: AuthenticationError, 404: NotFoundError,
    413: RequestTooLargeError, 503: ServiceUnavailableError,
}


def error_from_response(status: int, body: Any) -> APIError:
    """The exception for an error response with *status* and JSON *body* (or text)."""
    fields = body.get("error") if isinstance(body, dict) else None
    if not isinstance(fields, dict):
        fields = {"message": str(body) if body else f"HTTP {status}"}
    cls = _BY_STATUS.get(status, ServerError if status >= 500 else APIError)
    return cls(str(fields.get("message")), status=status, type=fields.get("type"),
               param=fields.get("param"), code=fields.get("code"))
