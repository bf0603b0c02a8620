"""The HTTP routes: OpenAI's ``/v1`` API, vLLM's ``/tokenize`` pair, ``/health``, ``/metrics``.

Each generation route does the same four things: parse the body (pydantic), tokenize the
prompt, submit engine requests through an `OutputStream` (refusals become 400s before any
byte is sent), then either stream SSE chunks or wait for the whole answer — giving up, and
aborting, if the client disconnects first.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from vexel_core.engine import GenerationRequest
from vexel_core.errors import RequestError
from vexel_core.server.errors import bad_request
from vexel_core.server.metrics import CONTENT_TYPE
from vexel_core.server.openai_format import ChatFormat, CompletionFormat
from vexel_core.server.schemas import (
    ChatCompletionBody,
    CompletionBody,
    DetokenizeBody,
    GenerationBody,
    TokenizeBody,
)
from vexel_core.server.sse import EventStreamResponse
from vexel_core.server.streams import OutputStream

if TYPE_CHECKING:
    from vexel_core.server.app import ServerState

B = TypeVar("B", bound=BaseModel)
T = TypeVar("T")


def _state(request: Request) -> ServerState:
    return request.app.state.vexel  # type: ignore[no-any-return]


async def _parse(request: Request, model: type[B]) -> B:
    raw = await request.body()
    try:
        data = json.loads(raw)
    except ValueError as err:
        raise bad_request(f"the request body is not valid JSON: {err}") from None
    if not isinstance(data, dict):
        raise bad_request("the request body must be a JSON object")
    return model.model_validate(data)


async def _until_disconnected(request: Request, work: Awaitable[T]) -> T | None:
    """The result of *work*, or None (and *work* cancelled) if the client leaves first."""

    async def client_left() -> None:
        while (await request.receive())["type"] != "http.disconnect":
            pass

    task, watcher = asyncio.ensure_future(work), asyncio.ensure_future(client_left())
    try:
        await asyncio.wait({task, watcher}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        watcher.cancel()
        if not task.done():  # the client left (or the server is stopping)
            task.cancel()
    return None if task.cancelled() else task.result()


# -- generation -----------------------------------------------------------------------------

async def chat_completions(request: Request) -> Response:
    state = _state(request)
    engine = state.ready()
    body = await _parse(request, ChatCompletionBody)
    body.check_supported()
    model = state.check_model(body.model)
    prompt = engine.tokenizer.encode_chat(body.messages)
    return await _generate(request, state, body, f"chatcmpl-{uuid.uuid4().hex}", model,
                           [prompt], body.max_new_tokens(), body.logprobs_wanted(), ChatFormat,
                           prompt_param="messages")


async def completions(request: Request) -> Response:
    state = _state(request)
    engine = state.ready()
    body = await _parse(request, CompletionBody)
    body.check_supported()
    model = state.check_model(body.model)
    prompts = [engine.tokenizer.encode(p) if isinstance(p, str) else p for p in body.prompts()]
    return await _generate(request, state, body, f"cmpl-{uuid.uuid4().hex}", model, prompts,
                           body.max_tokens, body.logprobs, CompletionFormat,
                           prompt_param="prompt")


async def _generate(request: Request, state: ServerState, body: GenerationBody,
                    response_id: str, model: str, prompts: list[list[int]],
                    max_tokens: int | None, logprobs: int | None,
                    format_class: type[ChatFormat] | type[CompletionFormat], *,
                    prompt_param: str) -> Response:
    """Submit one engine request per prompt; stream or answer. *prompt_param* names the
    request field that held the prompt, for errors about it."""
    engine = state.ready()
    sampling = body.sampling(logprobs)
    requests = [
        GenerationRequest(response_id if len(prompts) == 1 else f"{response_id}-{i}", ids,
                          sampling, _token_limit(state, max_tokens, len(ids)),
                          body.stop_strings(), list(body.stop_token_ids),
                          ignore_eos=body.ignore_eos, n=body.n)
        for i, ids in enumerate(prompts)
    ]
    stop_ids = set(body.stop_token_ids) | (set() if body.ignore_eos
                                           else set(engine.tokenizer.stop_ids))
    fmt = format_class(response_id, model, engine.tokenizer,
                       {r.request_id: r.prompt_ids for r in requests}, n=body.n,
                       stop_ids=stop_ids, logprobs=logprobs is not None,
                       return_token_ids=body.return_token_ids,
                       include_usage=body.include_usage)
    idle = state.settings.server.keepalive_seconds if body.stream else None
    try:
        stream = await OutputStream.open(engine, requests, idle)
    except RequestError as err:
        if err.param == "prompt":
            err.param = prompt_param
        raise
    if body.stream:
        return EventStreamResponse(stream, fmt)
    try:
        outputs = await _until_disconnected(request, stream.outputs())
    finally:
        stream.close()
    if outputs is None:  # nobody is listening; 499 is what nginx logs for this
        return Response(status_code=499)
    return JSONResponse(fmt.response(outputs))


def _token_limit(state: ServerState, max_tokens: int | None, prompt_len: int) -> int:
    """*max_tokens*, or without one (OpenAI: "as many as fit") what is left of the context
    or of the whole KV pool, whichever is smaller, after the prompt."""
    if max_tokens is not None:
        return max_tokens
    engine = state.ready().engine
    room = min(engine.context_len, engine.blocks.num_blocks * engine.blocks.block_size)
    return max(room - prompt_len, 1)  # a prompt that fills it all is refused by the engine


# -- models, tokens -------------------------------------------------------------------------

async def list_models(request: Request) -> JSONResponse:
    state = _state(request)
    state.ready()
    return JSONResponse({"object": "list", "data": [state.model_card()]})


async def get_model(request: Request) -> JSONResponse:
    state = _state(request)
    state.ready()
    state.check_model(request.path_params["model"])
    return JSONResponse(state.model_card())


async def tokenize(request: Request) -> JSONResponse:
    state = _state(request)
    engine = state.ready()
    body = await _parse(request, TokenizeBody)
    state.check_model(body.model)
    tok = engine.tokenizer
    if body.messages is not None:
        ids = tok.encode_chat(body.messages, add_generation_prompt=body.add_generation_prompt)
    else:
        ids = tok.encode(body.prompt or "", add_special=body.add_special_tokens)
    return JSONResponse({"tokens": ids, "count": len(ids),
                         "max_model_len": engine.engine.context_len})


async def detokenize(request: Request) -> JSONResponse:
    state = _state(request)
    engine = state.ready()
    body = await _parse(request, DetokenizeBody)
    state.check_model(body.model)
    for i, token in enumerate(body.tokens):
        if not 0 <= token < engine.tokenizer.vocab_size:
            raise bad_request(f"tokens[{i}] = {token} is not a token id: the vocabulary has "
                              f"ids 0..{engine.tokenizer.vocab_size - 1}", param=f"tokens[{i}]")
    return JSONResponse({"prompt": engine.tokenizer.decode(body.tokens)})


# -- operations -----------------------------------------------------------------------------

async def health(request: Request) -> JSONResponse:
    """200 once the model is loaded; 503 while it loads (or if loading failed)."""
    state = _state(request)
    body: dict[str, Any]
    if state.engine is not None:
        return JSONResponse({"status": "ok", "model": state.model_id})
    if state.load_error is not None:
        body = {"status": "failed", "error": str(state.load_error)}
    else:
        body = {"status": "loading"}
    return JSONResponse(body, status_code=503)


async def metrics(request: Request) -> Response:
    return Response(_state(request).metrics.render(), media_type=CONTENT_TYPE)


ROUTES = [
    Route("/v1/chat/completions", chat_completions, methods=["POST"]),
    Route("/v1/completions", completions, methods=["POST"]),
    Route("/v1/models", list_models, methods=["GET"]),
    Route("/v1/models/{model:path}", get_model, methods=["GET"]),
    Route("/tokenize", tokenize, methods=["POST"]),
    Route("/detokenize", detokenize, methods=["POST"]),
    Route("/health", health, methods=["GET"]),
    Route("/metrics", metrics, methods=["GET"]),
]
