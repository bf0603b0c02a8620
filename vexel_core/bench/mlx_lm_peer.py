"""mlx-lm's `BatchGenerator` on the same shape and workload, in the same process.

mlx-lm cannot read these GGUF files' quantized blocks, so its model is built from the same
preset with random weights (bf16, or MLX affine 8/6/4-bit with groups of 32: the blocks of
Q8_0 and Q4_0 and Q4_K's sub-blocks; Q6_K's are 16). Its batching keeps one contiguous cache;
it is the peer on the same MLX backend.
"""

from __future__ import annotations

import time

import mlx.core as mx
import mlx.nn as nn

from vexel_core.bench.random_model import PRESETS
from vexel_core.bench.workload import BenchResult, Workload, percentiles
from vexel_core.errors import VexelError


def require_mlx_lm() -> None:
    """Raise a `VexelError` unless mlx-lm can be imported. `vexel bench` checks this before
    Vexel's own run, so that a missing peer costs nothing; the functions below assume it."""
    try:
        import mlx_lm.generate  # noqa: F401
        import mlx_lm.models.llama  # noqa: F401
    except ImportError as exc:
        raise VexelError("--compare mlx-lm needs the mlx-lm package (pip install mlx-lm)") from exc


def build_mlx_lm_model(preset_name: str, dtype: str) -> nn.Module:
    from mlx_lm.models.llama import Model, ModelArgs

    p = PRESETS[preset_name]
    args = ModelArgs(
        model_type="llama", hidden_size=p.hidden, num_hidden_layers=p.layers,
        intermediate_size=p.ffn, num_attention_heads=p.heads, num_key_value_heads=p.kv_heads,
        rms_norm_eps=1e-5, vocab_size=p.vocab, rope_theta=p.rope_base,
        max_position_embeddings=p.context, tie_word_embeddings=False,
    )
    model = Model(args)
    model.set_dtype(mx.bfloat16 if dtype != "f16" else mx.float16)
    bits = {"q8_0": 8, "q4_0": 4, "q4_1": 4, "q5_0": 5, "q5_1": 5, "q4_k": 4, "q5_k": 5,
            "q6_k": 6, "q4_k_m": 4, "q5_k_m": 5}.get(dtype)
    if bits:
        nn.quantize(model, group_size=32, bits=bits)
    mx.eval(model.parameters())
    return model


def _generate(model: nn.Module, prompts: list[list[int]], max_tokens: int) -> None:
    from mlx_lm.generate import BatchGenerator

    gen = BatchGenerator(model, max_tokens=max_tokens, stop_tokens=[])
    gen.insert(prompts, [max_tokens] * len(prompts))
    done = 0
    while done < len(prompts):
        done += sum(r.finish_reason is not None for r in gen.next_generated())
    gen.close()


def run_mlx_lm(preset_name: str, dtype: str, w: Workload) -> BenchResult:
    from mlx_lm.generate import BatchGenerator

    model = build_mlx_lm_model(preset_name, dtype)
    vocab = PRESETS[preset_name].vocab
    warm = Workload(min(4, w.num_requests), w.prompt_len, 2, seed=w.seed + 1)
    _generate(model, warm.prompts(vocab), 4)  # compile kernels before timing, as for Vexel
    prompts = w.prompts(vocab)
    mx.reset_peak_memory()
    gen = BatchGenerator(model, max_tokens=w.output_len, completion_batch_size=w.num_requests,
                         prefill_batch_size=min(8, w.num_requests), stop_tokens=[])
    t0 = time.perf_counter()
    gen.insert(prompts, [w.output_len] * w.num_requests)
    first: dict[int, float] = {}
    last: dict[int, float] = {}
    itls: list[float] = []
    done = 0
    generated = 0
    while done < w.num_requests:
        responses = gen.next_generated()
        now = time.perf_counter()
        for r in responses:
            generated += 1
            if r.uid not in first:
                first[r.uid] = now - t0
            else:
                itls.append(now - last[r.uid])
            last[r.uid] = now
            if r.finish_reason is not None:
                done += 1
    wall = time.perf_counter() - t0
    gen.close()
    return BenchResult(
        engine="mlx-lm", requests=w.num_requests, prompt_len=w.prompt_len,
        output_len=w.output_len, wall_s=wall, requests_per_s=w.num_requests / wall,
        generated_tok_per_s=generated / wall,
        prompt_tok_per_s=w.num_requests * w.prompt_len / wall,
        ttft_s=percentiles(list(first.values())), itl_s=percentiles(itls),
        peak_memory_gib=mx.get_peak_memory() / 2**30, generated_tokens=generated,
    )
