"""The device memory the engine may use, and keeping MLX's use near what the engine holds.

MLX keeps every input of a GPU operation alive until the GPU has run it, and it makes the
host wait for the GPU only when more than 10 command batches are in flight or its active
memory passes its memory limit (mlx/transforms.cpp). Vexel has MLX replay a whole step as
one CUDA graph (`vexel_core.gpu.set_cuda_graph_defaults`), so a prompt step's activations of
every layer were alive at once: 16 prompts of 512 tokens through a Q4_0 Llama-3-8B peaked at
66.7 GiB beside 20.5 GiB of weights and KV pool (H200, session 41). MLX's default limit is
95% of a CUDA GPU's memory, and 1.5x the recommended working set on Apple silicon, where the
memory is the user's RAM. The limit is a guideline, not an allocation cap: past it MLX waits
for the GPU to finish work and free buffers; it fails only when memory really runs out.

The bound alone halved a prompt step's peak, not more: past the limit MLX waits only for the
command batches it committed when a CUDA graph filled up (400 operations here), so a step ran
up to one graph past it (16 prompts of 512: 67.2 GiB before, 36.1 under a 24.5 GiB limit, at
the same speed; session 42). Building a step's graph allocates nothing, so the engine has the
model evaluate the steps too large for the working set a layer at a time as it builds them
(`paced_step_tokens`, `CausalLM.pace_steps_over`). The same 16 prompts then peaked at 23.8
GiB, and their prompt step took 183 ms instead of 223: the GPU starts on the first layers
while the host builds the rest (session 43).
"""

from __future__ import annotations

import os
from functools import cache

import mlx.core as mx

from vexel_core.gguf.description import ModelDescription

ACTIVATION_BYTES = 4
"""Bytes per activation in `step_working_set`: float32, the widest a step computes in."""


@cache
def device_memory_bytes() -> int:
    """Memory MLX may use: its limit on GPUs as the process found it, physical memory on the
    CPU. Read once, so that an engine's own bound (`bound_device_memory`) never shrinks the
    budget of the next engine in the process.

    ``VEXEL_DEVICE_MEMORY_LIMIT_GB`` caps MLX first: on CUDA its allocator uses managed
    memory, and asking for more than the card has free can hang the GPU.
    """
    limit = os.environ.get("VEXEL_DEVICE_MEMORY_LIMIT_GB")
    if limit:
        mx.set_memory_limit(int(float(limit) * 2**30))
    if mx.default_device() != mx.cpu:
        return int(mx.get_memory_limit())
    return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))


def step_working_set(desc: ModelDescription, max_batched_tokens: int,
                     max_batch_size: int) -> int:
    """A generous bound on what one engine step computes beyond weights and KV pool: two
    layers' activations of a full step (the hidden state and its norm, q, the attention
    output and the residual sums; k and v; the feed-forward's gate, up and their product)
    and a logits row for every sequence."""
    ff = desc.feed_forward_length or 4 * desc.embedding_length
    kv = desc.head_count_kv * (desc.head_dim + desc.value_head_dim)
    per_token = 6 * desc.embedding_length + kv + 3 * ff
    layers = 2 * max_batched_tokens * per_token
    logits = max_batch_size * desc.vocab_size
    return (layers + logits) * ACTIVATION_BYTES


def paced_step_tokens(desc: ModelDescription, max_batched_tokens: int) -> int:
    """Steps of more tokens than this hold more activations across all layers than
    `step_working_set`'s two layers of a full step: the model evaluates them a layer at a
    time. Never less than a step of one token a layer."""
    return max(1, 2 * max_batched_tokens // desc.block_count)


def bound_device_memory(working_set: int) -> int | None:
    """On a GPU, set MLX's memory limit to what is allocated now (weights, KV pool) plus
    *working_set*, never above `device_memory_bytes`; return the limit set. The CPU keeps
    MLX's limit (None): there MLX queues a task every 10 operations and at most 10 tasks, so
    the host never runs far ahead of the computation."""
    if mx.default_device() == mx.cpu:
        return None
    limit = min(device_memory_bytes(), mx.get_active_memory() + working_set)
    mx.set_memory_limit(limit)
    return limit


def release_device_memory() -> None:
    """Give MLX back the limit the process started with (`device_memory_bytes`)."""
    if mx.default_device() != mx.cpu:
        mx.set_memory_limit(device_memory_bytes())
