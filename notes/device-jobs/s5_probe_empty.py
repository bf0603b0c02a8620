"""Session 5 probe: which operation of an engine step fails on CUDA with "invalid argument"
(test_engine's preemption and seeded-sampling tests). Runs those tests with every attention
call and every sampler launch evaluated on the spot, printing the step's shape at a failure."""

import sys

import mlx.core as mx
import pytest

import vexel_core.attention.backends as B
import vexel_core.engine.core as C
import vexel_core.sampling.sampler as S

orig_attn = B._PagedAttention.__call__


def attn(self, q, k, v, **kw):  # type: ignore[no-untyped-def]
    out = orig_attn(self, q, k, v, **kw)
    b = kw["batch"]
    try:
        mx.eval(out)
    except RuntimeError as e:
        print(f"ATTENTION FAILED layer {kw['layer']} {self.name}: q {q.shape} query_lens "
              f"{b.query_lens} context_lens {b.context_lens}: {e}", flush=True)
        raise
    return out


orig_launch = S.Sampler.launch


def launch(self, logits, params, histories, ahead=0):  # type: ignore[no-untyped-def]
    try:
        mx.eval(logits)
    except RuntimeError as e:
        print(f"LOGITS FAILED {logits.shape}: {e}", flush=True)
        raise
    pending = orig_launch(self, logits, params, histories, ahead=ahead)
    for a in pending.arrays():
        try:
            mx.eval(a)
        except RuntimeError as e:
            print(f"SAMPLER FAILED {a.shape} {a.dtype} params {params} ahead {ahead}: {e}",
                  flush=True)
            raise
    return pending


B._PagedAttention.__call__ = attn
S.Sampler.launch = launch
C.mx = mx
sys.exit(pytest.main(["-q", "-x", "-p", "no:cacheprovider", "--tb=short", "tests/test_engine.py",
                      "-k", "preemption or seeded"]))
