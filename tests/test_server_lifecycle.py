"""The server's life around requests: loading (503), keep-alives while a request waits, an
engine failure inside a stream, `vexel serve` itself (config file, default bind address,
graceful shutdown on SIGTERM, a model that fails to load), and the warm-up before /health."""

from __future__ import annotations

import asyncio
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
import structlog
from click.testing import CliRunner

from tests.serving import running_server, server_settings, wait_for, write_tiny_model
from tests.test_server import parse_sse
from vexel_core.cli import cli
from vexel_core.config import Settings
from vexel_core.engine import AsyncEngine, start_engine
from vexel_core.gpu import on_cuda
from vexel_core.logs import configure_logging
from vexel_core.server import VexelServer

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def model_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tiny_model(tmp_path_factory.mktemp("lifecycle") / "tiny.gguf")


def test_health_is_503_while_loading_then_200(model_path: Path) -> None:
    settings = server_settings(model_path)
    release = threading.Event()

    def slow_load():  # type: ignore[no-untyped-def]
        release.wait(30)
        return start_engine(settings)

    with running_server(settings, slow_load, wait_ready=False) as server:
        health = httpx.get(server.url + "/health")
        assert (health.status_code, health.json()) == (503, {"status": "loading"})
        sdk = openai.OpenAI(base_url=server.url + "/v1", api_key="none", max_retries=0)
        with pytest.raises(openai.InternalServerError) as info:
            sdk.models.list()
        assert info.value.status_code == 503
        assert info.value.body["code"] == "model_loading"  # type: ignore[index]
        release.set()
        assert wait_for(lambda: httpx.get(server.url + "/health").status_code == 200)
        assert [m.id for m in sdk.models.list()] == ["tiny-chat"]


def test_keepalive_comments_while_a_request_waits(model_path: Path) -> None:
    """With one sequence at a time, a second request waits behind the first: its stream
    carries keep-alive comments until its first token, then completes normally."""
    settings = server_settings(model_path, engine={"max_batch_size": 1},
                               keepalive_seconds=0.02)
    with running_server(settings) as server:
        first_started = threading.Event()

        def long_request() -> None:
            body = {"prompt": "Long", "max_tokens": 200, "ignore_eos": True, "stream": True}
            with httpx.stream("POST", server.url + "/v1/completions", json=body) as r:
                for _ in r.iter_lines():
                    first_started.set()

        blocker = threading.Thread(target=long_request)
        blocker.start()
        assert first_started.wait(10)
        body = {"prompt": "Short", "max_tokens": 4, "ignore_eos": True, "stream": True}
        raw = httpx.post(server.url + "/v1/completions", json=body, timeout=30).content
        blocker.join()
    chunks, keepalives = parse_sse(raw)
    assert keepalives >= 1
    text = raw.decode()
    assert text.index(": keep-alive") < text.index("data: {")  # before the first token
    assert chunks[-1]["choices"][0]["finish_reason"] == "length"


def test_engine_failure_mid_stream_is_an_error_event(model_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    with running_server(server_settings(model_path)) as server:
        engine = server.state.engine
        assert engine is not None
        core = engine.engine
        real_step, calls = core.step, []

        def step_that_fails_once() -> Any:  # the 5th step fails, as a device error would
            calls.append(1)
            if len(calls) == 5:
                raise RuntimeError("simulated device failure")
            return real_step()

        monkeypatch.setattr(core, "step", step_that_fails_once)
        body = {"prompt": "Hello", "max_tokens": 50, "ignore_eos": True, "stream": True}
        raw = httpx.post(server.url + "/v1/completions", json=body).content
        chunks, _ = parse_sse(raw)  # still framed, still ends with [DONE]
        assert len(chunks) >= 2 and all("choices" in c for c in chunks[:-1])  # tokens first
        error = chunks[-1]["error"]
        assert error["type"] == "server_error" and "simulated device failure" in error["message"]
        blocks = engine.engine.blocks
        assert wait_for(lambda: blocks.num_free == blocks.num_blocks)


# -- the command ------------------------------------------------------------------------------

def _serve(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "vexel_core.cli", "serve", *args],
                            stderr=subprocess.PIPE, text=True, cwd=REPO)


def _url_of(process: subprocess.Popen[str]) -> str:
    assert process.stderr is not None
    line = process.stderr.readline()
    assert "serving on http://" in line, line
    return line.split("serving on ")[1].split("/v1")[0]


@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGINT], ids=["TERM", "INT"])
def test_vexel_serve_uses_the_config_file_and_stops_gracefully(
        model_path: Path, tmp_path: Path, stop_signal: signal.Signals) -> None:
    """The example vexel.toml, with a key and port 0 on top: 127.0.0.1 by default, the key
    enforced, and SIGTERM or SIGINT lets an open stream finish before a clean exit."""
    example = (REPO / "vexel.toml").read_text()
    config = tmp_path / "vexel.toml"
    config.write_text(example.replace('port = 8000', 'port = 0').replace(
        '# api_key = "change-me"', 'api_key = "from-config"'))
    process = _serve("-m", str(model_path), "--config", str(config), "--kv-cache-memory",
                     "16MiB")
    try:
        url = _url_of(process)
        assert url.startswith("http://127.0.0.1:")
        assert wait_for(lambda: _ok(url + "/health"), timeout=60)
        assert httpx.get(url + "/v1/models").status_code == 401
        headers = {"Authorization": "Bearer from-config"}
        body = {"prompt": "Hi", "max_tokens": 150, "ignore_eos": True, "stream": True}
        raw = b""
        with httpx.stream("POST", url + "/v1/completions", json=body, headers=headers) as r:
            for chunk in r.iter_raw():
                if not raw:
                    process.send_signal(stop_signal)  # mid-stream
                raw += chunk
        chunks, _ = parse_sse(raw)
        assert chunks[-1]["choices"][0]["finish_reason"] == "length"
        assert process.wait(timeout=30) == 0
        assert process.stderr is not None
        assert "server stopped" in process.stderr.read()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_vexel_serve_reports_a_model_that_cannot_load(tmp_path: Path) -> None:
    missing = tmp_path / "nothing.gguf"
    missing.write_bytes(b"not a gguf file")
    process = _serve("-m", str(missing), "--port", "0")
    _, err = process.communicate(timeout=60)
    assert process.returncode == 1
    assert f"vexel: error: {missing}" in err and "Traceback" not in err


def test_example_config_is_valid_and_documents_every_server_setting() -> None:
    from vexel_core.config import ServerSettings, load_settings

    text = (REPO / "vexel.toml").read_text()
    settings = load_settings(REPO / "vexel.toml")
    assert settings.server.host == "127.0.0.1"
    for name in ServerSettings.model_fields:
        assert name in text, f"vexel.toml does not mention server.{name}"


def _ok(url: str) -> bool:
    try:
        return httpx.get(url).status_code == 200
    except httpx.TransportError:
        return False


def test_parse_sse_rejects_bad_framing() -> None:
    """The framing checker the server tests rely on fails on what OpenAI would not send."""
    good = b'data: {"a": 1}\n\n: keep-alive\n\ndata: [DONE]\n\n'
    assert parse_sse(good) == ([{"a": 1}], 1)
    for bad in (b'data: {"a": 1}\n\n', b'data: {"a": 1}\ndata: [DONE]\n\n',
                b'{"a": 1}\n\ndata: [DONE]\n\n', good + b"data: {}\n\n"):
        with pytest.raises(AssertionError):
            parse_sse(bad)


def test_without_max_tokens_the_answer_fills_what_the_kv_pool_holds(model_path: Path) -> None:
    """OpenAI's default is "as many tokens as fit": here the pool (64 KiB: fewer tokens than
    the 256-token context) is the limit, and the request is served rather than refused."""
    settings = server_settings(model_path, engine={"kv_cache_memory": "64KiB"})
    with running_server(settings) as server:
        blocks = server.state.engine.engine.blocks  # type: ignore[union-attr]
        capacity = blocks.num_blocks * blocks.block_size
        assert capacity < 256
        r = httpx.post(server.url + "/v1/chat/completions", timeout=60, json={
            "messages": [{"role": "user", "content": "Hi"}], "ignore_eos": True}).json()
        usage = r["usage"]
        assert r["choices"][0]["finish_reason"] == "length"
        assert usage["prompt_tokens"] + usage["completion_tokens"] == capacity


# -- warm-up ----------------------------------------------------------------------------------

def _engine_with_listener(settings: Settings, events: list[str]) -> Callable[[], AsyncEngine]:
    """A factory whose engine records every stats event from its first step on."""
    def factory() -> AsyncEngine:
        engine = start_engine(settings)
        engine.stats.subscribe(lambda event, value: events.append(event))
        return engine
    return factory


@pytest.mark.parametrize("warm_up", [True, False], ids=["warm-up", "no-warm-up"])
def test_warm_up_runs_before_health_and_metrics_count_only_real_requests(
        model_path: Path, warm_up: bool) -> None:
    settings = server_settings(model_path, engine={"max_batch_size": 4, "prefill_chunk": 16},
                               warm_up=warm_up)
    events: list[str] = []
    with running_server(settings, _engine_with_listener(settings, events)) as server:
        # Rounds of 1, 2 and 4 concurrent requests (4 = max_batch_size caps the 8), on CUDA
        # one prompt per padded length up to the 16-token chunk (one bucket: 64), then a
        # two-chunk prompt beside a short one, each ending at its length limit, all before
        # the engine was handed to the routes.
        lengths = 1 if on_cuda() else 0
        assert events.count("finish:length") == (1 + 2 + 4 + lengths + 2 if warm_up else 0)
        engine = server.state.engine
        assert engine is not None
        blocks = engine.engine.blocks
        assert blocks.num_free == blocks.num_blocks
        stats = engine.stats
        assert (stats.prompt_tokens, stats.generation_tokens) == (0, 0)
        body = {"prompt": "Hello", "max_tokens": 3, "ignore_eos": True}
        usage = httpx.post(server.url + "/v1/completions", json=body).json()["usage"]
        text = httpx.get(server.url + "/metrics").text
    assert stats.generation_tokens == usage["completion_tokens"] == 3
    assert re.search(r'^vexel:generation_tokens_total\{model_name="tiny-chat"\} 3\.0$', text, re.M)
    # A prompt shorter than a block looks nothing up in the prefix cache; the warm-up's
    # prompts (of whole blocks) did, and must not be counted either.
    assert stats.prefix_queries == 0
    assert re.search(r'^vexel:prefix_cache_queries_total\{model_name="tiny-chat"\} 0\.0$', text,
                     re.M)


def test_warm_up_logs_each_rounds_seconds_at_debug_level(model_path: Path) -> None:
    """`--log-level debug` tells a slow start-up where its seconds went: one event per round,
    in order, each with its wall time."""
    settings = server_settings(model_path, engine={"max_batch_size": 4, "prefill_chunk": 16})
    engine = start_engine(settings)
    configure_logging("debug")
    try:
        with structlog.testing.capture_logs() as logs:
            asyncio.run(engine.warm_up())
    finally:
        configure_logging("warning")
        engine.shutdown()
    rounds = [e for e in logs if e["event"] == "warm-up round"]
    lengths = ["prompt lengths"] if on_cuda() else []
    assert [e["round"] for e in rounds] == ["batch 1", "batch 2", "batch 4", *lengths, "chunked"]
    assert all(e["log_level"] == "debug" and e["seconds"] >= 0 for e in rounds)


def test_serve_flags_turn_the_warm_up_off_and_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """`vexel serve --no-warm-up` reaches the server's settings (llama.cpp's --no-warmup);
    without the flag the setting's default, on, holds."""
    import vexel_core.server

    seen: list[Settings] = []

    class Recorder:
        url = "http://127.0.0.1:0"

        def __init__(self, settings: Settings, **_: Any) -> None:
            seen.append(settings)

        def run(self) -> None:
            pass

    monkeypatch.setattr(vexel_core.server, "VexelServer", Recorder)
    for args, warm in (([], True), (["--no-warm-up"], False), (["--warm-up"], True)):
        result = CliRunner().invoke(cli, ["serve", *args])
        assert result.exit_code == 0, result.output
        # the wait a user is told about, and how to skip it
        assert ("warming up" in result.output and "--no-warm-up" in result.output) == warm
    assert [s.server.warm_up for s in seen] == [True, False, True]


def test_a_failing_warm_up_is_a_load_failure(model_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Real requests would fail as the warm-up did: the server stops and `run` raises, as
    for a model that cannot load (`vexel serve` reports it), and the engine thread ends."""
    async def broken_warm_up(self: AsyncEngine) -> None:
        raise RuntimeError("kernel failed to compile")

    def engine_threads() -> int:
        return sum(t.name == "vexel-engine" and t.is_alive() for t in threading.enumerate())

    monkeypatch.setattr(AsyncEngine, "warm_up", broken_warm_up)
    before = engine_threads()
    server = VexelServer(server_settings(model_path))
    with pytest.raises(RuntimeError, match="kernel failed to compile"):
        server.run()
    assert server.state.engine is None and engine_threads() == before
