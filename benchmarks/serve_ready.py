"""How long a starting ``vexel serve`` takes to answer: seconds until ``/health`` says 200,
then the first request's seconds (a short completion), to check that the warm-up left it
nothing to compile.

    python benchmarks/serve_ready.py http://127.0.0.1:8000 [STARTED] [--timeout 300]

``STARTED``: the server's start as seconds since the epoch (``date +%s.%N`` before launching
it); the time this script starts otherwise.
"""

from __future__ import annotations

import argparse
import json
import time
import urllib.error
import urllib.request


def wait_healthy(base: str, timeout: float) -> None:
    """Poll ``/health`` every 0.1 s until it answers 200; raise TimeoutError after *timeout*."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(f"{base}/health", timeout=5) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError):
            pass  # not listening yet, or 503 while loading
        time.sleep(0.1)
    raise TimeoutError(f"{base}/health did not answer 200 within {timeout} s")


def complete(base: str, max_tokens: int = 16) -> float:
    """Seconds one non-streamed completion of *max_tokens* tokens takes."""
    body = json.dumps({"prompt": "The quick brown fox", "max_tokens": max_tokens,
                       "temperature": 0}).encode()
    request = urllib.request.Request(f"{base}/v1/completions", data=body,
                                     headers={"Content-Type": "application/json"})
    started = time.perf_counter()
    with urllib.request.urlopen(request, timeout=120) as response:
        response.read()
    return time.perf_counter() - started


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("base")
    ap.add_argument("started", nargs="?", type=float)
    ap.add_argument("--timeout", type=float, default=300)
    a = ap.parse_args()
    started = a.started if a.started is not None else time.time()
    wait_healthy(a.base, a.timeout)
    ready = time.time() - started
    first, second = complete(a.base), complete(a.base)
    print(f"healthy after {ready:.1f} s; first request {first:.2f} s, second {second:.2f} s")


if __name__ == "__main__":
    main()
