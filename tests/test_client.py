"""The project's own client (`vexel_core.client`), sync and async, against a real server.

Its typed results are checked against the server's raw JSON for the same (greedy, hence
repeatable) request, and its exceptions against the statuses the server answers.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from pathlib import Path

import httpx
import pytest

from tests.serving import API_KEY, running_server, server_settings, wait_for, write_tiny_model
from tests.test_server import finished, kv_pool_idle
from vexel_core.client import (
    APIConnectionError,
    AsyncClient,
    AuthenticationError,
    BadRequestError,
    Client,
    NotFoundError,
    RequestTooLargeError,
    ServiceUnavailableError,
)
from vexel_core.engine import start_engine
from vexel_core.server import VexelServer

GREEDY = {"temperature": 0, "max_tokens": 10, "ignore_eos": True}
AUTH = {"Authorization": f"Bearer {API_KEY}"}


@pytest.fixture(scope="module")
def model_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tiny_model(tmp_path_factory.mktemp("client") / "tiny.gguf")


@pytest.fixture(scope="module")
def server(model_path: Path):  # type: ignore[no-untyped-def]
    with running_server(server_settings(model_path, api_key=API_KEY,
                                        max_body_bytes=16 * 1024)) as srv:
        yield srv


@pytest.fixture
def client(server: VexelServer):  # type: ignore[no-untyped-def]
    with Client(server.url + "/v1", api_key=API_KEY) as c:  # a /v1 suffix is fine too
        yield c


def raw(server: VexelServer, path: str, body: dict) -> dict:  # type: ignore[type-arg]
    return httpx.post(server.url + path, json=body, headers=AUTH).json()  # type: ignore[no-any-return]


def test_models_chat_and_complete_match_the_raw_json(client: Client,
                                                     server: VexelServer) -> None:
    client.wait_until_ready(timeout=5)
    [model] = client.models()
    assert (model.id, model.max_model_len) == ("tiny-chat", 256)

    answer = client.chat("Tell me about foxes.", logprobs=True, top_logprobs=2, **GREEDY)
    expected = raw(server, "/v1/chat/completions", {
        "messages": [{"role": "user", "content": "Tell me about foxes."}], "logprobs": True,
        "top_logprobs": 2, **GREEDY})
    assert answer.text == expected["choices"][0]["message"]["content"]
    assert answer.finish_reason == "length"
    assert answer.usage is not None
    assert answer.usage.completion_tokens == expected["usage"]["completion_tokens"] == 10
    assert answer.usage.prompt_tokens == expected["usage"]["prompt_tokens"]
    entries = expected["choices"][0]["logprobs"]["content"]
    assert answer.choices[0].logprobs is not None
    # Two computations of one request: the second reuses the first's cached prompt blocks and
    # computes the rest of the prompt in another shape, which a GPU may sum in another order
    # (the CPU gives the same numbers). Tokens and bytes are exact; log-probs within 1e-4,
    # far below what a wrongly parsed entry would be off by.
    assert [(t.token, t.bytes) for t in answer.choices[0].logprobs] == [
        (e["token"], bytes(e["bytes"])) for e in entries]
    assert [t.logprob for t in answer.choices[0].logprobs] == pytest.approx(
        [e["logprob"] for e in entries], abs=1e-4)
    for got, e in zip(answer.choices[0].logprobs, entries, strict=True):
        assert [token for token, _ in got.top] == [x["token"] for x in e["top_logprobs"]]
        assert [value for _, value in got.top] == pytest.approx(
            [x["logprob"] for x in e["top_logprobs"]], abs=1e-4)

    completion = client.complete("Once upon a time", logprobs=1, **GREEDY)
    expected = raw(server, "/v1/completions", {"prompt": "Once upon a time", "logprobs": 1,
                                                **GREEDY})
    assert completion.text == expected["choices"][0]["text"]
    assert completion.choices[0].logprobs is not None
    assert [t.token for t in completion.choices[0].logprobs] == \
        expected["choices"][0]["logprobs"]["tokens"]


def test_streams_add_up_to_the_whole_answer(client: Client) -> None:
    whole = client.chat([{"role": "user", "content": "Hi"}], n=2, **GREEDY)
    stream = client.chat_stream([{"role": "user", "content": "Hi"}], n=2, **GREEDY)
    texts = ["", ""]
    finishes = {}
    for delta in stream:
        texts[delta.index] += delta.text
        if delta.finish_reason:
            finishes[delta.index] = delta.finish_reason
    assert texts == [c.text for c in whole.choices]
    assert finishes == {0: "length", 1: "length"}
    assert stream.usage is not None and stream.usage.completion_tokens == 20
    assert stream.id is not None and stream.id.startswith("chatcmpl-")

    ids = client.tokenize("Hello world")
    plain = client.tokenize("Hello world", add_special_tokens=False)
    assert ids[1:] == plain and client.detokenize(plain) == "Hello world"
    assert client.complete_stream(ids, **GREEDY).text() == client.complete(ids, **GREEDY).text
    assert "vexel:generation_tokens_total" in client.metrics()


def test_async_client_gives_the_same_answers(client: Client, server: VexelServer) -> None:
    expected_chat = client.chat("Hi", **GREEDY).text
    expected_completion = client.complete("Once", **GREEDY).text

    async def main() -> tuple[str, str, str, list[str]]:
        async with AsyncClient(server.url, api_key=API_KEY) as aclient:
            await aclient.wait_until_ready(timeout=5)
            assert [m.id for m in await aclient.models()] == ["tiny-chat"]
            chat = (await aclient.chat("Hi", **GREEDY)).text
            completion = (await aclient.complete("Once", **GREEDY)).text
            streamed = await (await aclient.chat_stream("Hi", **GREEDY)).text()
            many = await asyncio.gather(*(aclient.complete("Once", **GREEDY) for _ in range(8)))
            return chat, completion, streamed, [c.text for c in many]

    chat, completion, streamed, many = asyncio.run(main())
    assert chat == streamed == expected_chat
    assert completion == expected_completion
    assert many == [expected_completion] * 8


def test_errors_map_to_exceptions(client: Client, server: VexelServer) -> None:
    with Client(server.url, api_key="wrong") as bad, pytest.raises(AuthenticationError) as auth:
        bad.models()
    assert (auth.value.status, auth.value.code) == (401, "invalid_api_key")
    with pytest.raises(NotFoundError) as missing:
        client.chat("Hi", model="gpt-4o")
    assert missing.value.param == "model"
    with pytest.raises(BadRequestError) as too_long:
        client.complete("fox " * 400)
    assert (too_long.value.param, too_long.value.code) == ("prompt", "context_length_exceeded")
    with pytest.raises(BadRequestError) as bad_param:
        client.chat_stream("Hi", temperature=9)
    assert bad_param.value.param == "temperature" and "temperature" in str(bad_param.value)
    with pytest.raises(RequestTooLargeError):
        client.complete("x" * 20_000)


def test_unreachable_server_raises_connection_errors() -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with Client(f"http://127.0.0.1:{port}") as c:
        assert not c.is_ready()
        with pytest.raises(APIConnectionError):
            c.models()
        start = time.monotonic()
        with pytest.raises(APIConnectionError, match="not ready after"):
            c.wait_until_ready(timeout=0.3, interval=0.05)
        assert time.monotonic() - start < 5


def test_leaving_a_stream_early_aborts_the_request(client: Client, server: VexelServer) -> None:
    before = finished(server, "abort")
    stream = client.complete_stream("Long story", max_tokens=200, ignore_eos=True)
    for i, _ in enumerate(stream):
        if i == 2:
            break
    stream.close()
    assert wait_for(lambda: finished(server, "abort") == before + 1)
    assert wait_for(lambda: kv_pool_idle(server))


def test_wait_until_ready_waits_for_the_model(model_path: Path) -> None:
    settings = server_settings(model_path)
    release = threading.Event()

    def slow_load():  # type: ignore[no-untyped-def]
        release.wait(30)
        return start_engine(settings)

    with running_server(settings, slow_load, wait_ready=False) as server, \
            Client(server.url) as c:
        with pytest.raises(ServiceUnavailableError) as loading:
            c.models()
        assert loading.value.code == "model_loading"
        threading.Timer(0.3, release.set).start()
        c.wait_until_ready(timeout=20)
        assert c.chat("Hi", **GREEDY).usage.completion_tokens == 10  # type: ignore[union-attr]
