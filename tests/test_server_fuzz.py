"""Request bodies that Hypothesis makes up, sent to a real server: any field of a valid body
replaced by any JSON value (wrong types, huge numbers, NaN, nested junk), on every route that
takes a body.

Whatever comes in, the answer is a 200 or OpenAI's error shape (a 400, or a 404 for a model
not served), never a 500; a stream that started ends with ``[DONE]`` or an error
event; and once the answers are in, no KV block is left in use. ``max_tokens`` stays small so
that a valid body costs a few milliseconds.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import examples, search_timeout
from tests.serving import API_KEY, running_server, server_settings, wait_for, write_tiny_model
from vexel_core.server import VexelServer

AUTH = {"Authorization": f"Bearer {API_KEY}"}
MESSAGES = [{"role": "user", "content": "Tell me about foxes."}]
VALID = {
    "/v1/chat/completions": {"model": "tiny-chat", "messages": MESSAGES, "max_tokens": 3},
    "/v1/completions": {"model": "tiny-chat", "prompt": "A fox", "max_tokens": 3},
    "/tokenize": {"prompt": "A fox"},
    "/detokenize": {"tokens": [1, 2, 3]},
}
ROUTES = ["/v1/chat/completions", "/v1/completions"] * 3 + ["/tokenize", "/detokenize"]
# Each route's fields (its pydantic body's, and what OpenAI's API has beside them). The
# length fields stay out: a valid body must not generate for long.
FIELDS = {
    "/v1/chat/completions": [
        "model", "messages", "temperature", "top_p", "presence_penalty", "frequency_penalty",
        "seed", "stop", "n", "stream", "stream_options", "logit_bias", "top_k", "min_p",
        "repetition_penalty", "stop_token_ids", "return_token_ids", "logprobs",
        "top_logprobs", "response_format", "tools", "tool_choice", "functions",
        "function_call", "user", "metadata"],
    "/v1/completions": [
        "model", "prompt", "temperature", "top_p", "presence_penalty", "frequency_penalty",
        "seed", "stop", "n", "stream", "stream_options", "logit_bias", "top_k", "min_p",
        "repetition_penalty", "stop_token_ids", "return_token_ids", "logprobs", "echo",
        "best_of", "suffix", "user"],
    "/tokenize": ["model", "prompt", "messages", "add_special_tokens", "add_generation_prompt"],
    "/detokenize": ["model", "tokens"],
}

SCALARS = (st.none() | st.booleans() | st.integers(-(2**70), 2**70)
           | st.floats(allow_nan=True, allow_infinity=True)
           | st.sampled_from([0, 1, 2, -1, 0.5, 128, 129, 50000, "", "x", "\x00", "\ud7ff"])
           | st.text(max_size=20))
JSON = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=12)
# Messages near the valid shape: roles and contents from a small set, or anything at all.
MESSAGE = st.fixed_dictionaries(
    {"role": st.sampled_from(["system", "user", "assistant", "tool", "robot"]) | JSON},
    optional={"content": st.text(max_size=30) | JSON, "name": JSON})


# Values a client might well send, so that most bodies are valid and their options combine.
UNIT = st.floats(0, 1)
PLAUSIBLE: dict[str, st.SearchStrategy[Any]] = {
    "temperature": st.floats(0, 2), "top_p": UNIT, "min_p": UNIT, "top_k": st.integers(0, 50),
    "presence_penalty": st.floats(-2, 2), "frequency_penalty": st.floats(-2, 2),
    "repetition_penalty": st.floats(0.5, 2), "seed": st.integers(0, 2**31),
    "stop": st.text(max_size=3) | st.lists(st.text(min_size=1, max_size=3), max_size=4),
    "n": st.integers(1, 3), "stream": st.booleans(),
    "stream_options": st.fixed_dictionaries({"include_usage": st.booleans()}),
    "stop_token_ids": st.lists(st.integers(0, 600), max_size=3),
    "return_token_ids": st.booleans(), "top_logprobs": st.integers(0, 5),
    "echo": st.booleans(), "user": st.text(max_size=5),
    "prompt": st.text(max_size=20) | st.lists(st.integers(0, 600), min_size=1, max_size=8)
    | st.lists(st.text(min_size=1, max_size=10), min_size=1, max_size=3),
    "add_special_tokens": st.booleans(), "add_generation_prompt": st.booleans(),
    "tokens": st.lists(st.integers(0, 600), max_size=8),
}


@st.composite
def requests(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    route = draw(st.sampled_from(ROUTES))
    body = dict(VALID[route])
    if route.startswith("/v1/"):
        body["stream"] = draw(st.booleans())
    for name in draw(st.lists(st.sampled_from(FIELDS[route]), max_size=3, unique=True)):
        if name == "messages" and draw(st.booleans()):
            body[name] = draw(st.lists(MESSAGE, max_size=3))
        elif name == "logprobs":  # a flag in chat, a count in completions
            body[name] = draw(st.booleans() if "chat" in route else st.integers(0, 5))
        elif name in PLAUSIBLE and draw(st.integers(0, 3)):
            body[name] = draw(PLAUSIBLE[name])
        else:
            body[name] = draw(JSON)
    return route, body


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[VexelServer]:
    model = write_tiny_model(tmp_path_factory.mktemp("fuzz") / "tiny.gguf")
    with running_server(server_settings(model, api_key=API_KEY)) as srv:
        yield srv


def check_error(response: httpx.Response) -> None:
    """OpenAI's error shape, with a message a person can act on."""
    error = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}, error
    assert isinstance(error["message"], str) and error["message"], error
    assert error["type"] == "invalid_request_error", error


def check_stream(response: httpx.Response) -> None:
    events = [line[len("data: "):] for line in response.text.split("\n\n")
              if line.startswith("data: ")]
    assert events, response.text
    if events[-1] != "[DONE]":  # a stream that failed after it started ends in an error
        check_error(httpx.Response(400, content=events[-1]))


@search_timeout(300)
@settings(max_examples=examples(250), deadline=None, suppress_health_check=[
    HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(request=requests())
def test_any_body_gets_an_answer_or_a_clear_400(server: VexelServer,
                                                request: tuple[str, dict[str, Any]]) -> None:
    route, body = request
    # allow_nan: Python's json writes NaN and Infinity, as some clients do; the server's
    # parser must refuse or accept them cleanly too
    content = json.dumps(body, allow_nan=True)
    response = httpx.post(server.url + route, headers={**AUTH, "Content-Type":
                          "application/json"}, content=content, timeout=60)
    assert response.status_code in (200, 400, 404), (response.status_code, response.text[:500])
    if response.status_code == 404:  # as OpenAI answers a model it does not serve
        check_error(response)
        assert response.json()["error"]["code"] == "model_not_found"
    elif response.status_code == 400:
        check_error(response)
    elif response.headers["content-type"].startswith("text/event-stream"):
        check_stream(response)
    else:
        answer = response.json()
        assert isinstance(answer, dict) and "error" not in answer, answer
    stats = server.state.engine.stats  # type: ignore[union-attr]
    assert wait_for(lambda: stats.kv_blocks_used == 0 and stats.running == 0), (
        "a KV block or a sequence was left behind")
