"""``vexel serve``: the engine behind an OpenAI-compatible HTTP API.

    app.py            create_app (Starlette + lifespan that loads the model), VexelServer
    routes.py         /v1/chat/completions, /v1/completions, /v1/models, /tokenize,
                      /detokenize, /health, /metrics
    schemas.py        request bodies (pydantic)
    openai_format.py  engine outputs -> OpenAI responses, chunks, usage, logprobs
    streams.py        one HTTP request's engine outputs, merged, with idle ticks
    sse.py            server-sent events framing, keep-alives, errors inside a stream
    metrics.py        Prometheus exporter (vexel:* names, after vLLM's)
    middleware.py     API key on /v1, body size limit
    errors.py         OpenAI error objects and their HTTP statuses
"""

from vexel_core.server.app import ServerState, VexelServer, create_app

__all__ = ["ServerState", "VexelServer", "create_app"]
