"""Errors as OpenAI's API shapes them: ``{"error": {"message", "type", "param", "code"}}``.

`APIError` carries an HTTP status with the four fields; `api_error_from` turns anything a
handler can raise into one, so every route, middleware and stream reports errors alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError
from starlette.responses import JSONResponse

from vexel_core.errors import RequestError, VexelError


class APIError(Exception):
    """An error response: HTTP *status* and OpenAI's error fields."""

    def __init__(self, status: int, message: str, *, type: str = "invalid_request_error",
                 param: str | None = None, code: str | None = None,
                 headers: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.type = type
        self.param = param
        self.code = code
        self.headers = headers

    def body(self) -> dict[str, Any]:
        return {"error": {"message": self.message, "type": self.type, "param": self.param,
                          "code": self.code}}

    def response(self) -> JSONResponse:
        return JSONResponse(self.body(), status_code=self.status, headers=self.headers)


def bad_request(message: str, param: str | None = None, code: str | None = None) -> APIError:
    return APIError(400, message, param=param, code=code)


def validation_error(err: ValidationError) -> APIError:
    """A pydantic error on a request body as a 400 naming the first offending field."""
    first = err.errors()[0]
    param = _dotted(first["loc"]) or None
    if first["type"] == "missing":
        message = f"{param} is required"
    elif first["type"] == "extra_forbidden":
        message = f"{param} is not a known parameter"
    elif param is None:  # a check on the whole body
        message = first["msg"].removeprefix("Value error, ")
    else:
        message = f"{param}: {first['msg']} (got {first.get('input')!r})"
    return bad_request(message, param=param)


def _dotted(loc: tuple[int | str, ...]) -> str:
    """('messages', 0, 'role') -> 'messages[0].role', as OpenAI names nested fields."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def api_error_from(exc: BaseException) -> APIError:
    """The error response for *exc*: our own types keep their meaning, the rest is a 500."""
    if isinstance(exc, APIError):
        return exc
    if isinstance(exc, ValidationError):
        return validation_error(exc)
    if isinstance(exc, RequestError):
        return bad_request(str(exc), param=exc.param, code=exc.code)
    if isinstance(exc, VexelError):  # tokenizer, chat template: caused by the request's input
        return bad_request(str(exc))
    return APIError(500, f"internal error: {type(exc).__name__}: {exc}", type="server_error")
