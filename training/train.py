"""The training loop (AdamW, warm-up then cosine decay, compiled step) and held-out metrics."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial

import mlx.core as mx
import mlx.nn as nn
import mlx.optimizers as optim
import numpy as np

from training.data import BatchSampler
from training.model import TinyLlama

LogFn = Callable[..., None]


@dataclass(frozen=True)
class TrainSettings:
    steps: int
    batch_size: int
    seq_len: int
    lr: float = 2e-3
    min_lr_ratio: float = 0.1
    warmup_steps: int = 50
    weight_decay: float = 0.1
    grad_clip: float = 1.0
    log_every: int = 25
    # mx.compile fuses the step into few kernels (the GPU's win); on the CPU backend it
    # spends ~15 s compiling C++ first, which a short run never earns back.
    compile: bool = True
    # Every this many steps, score the validation files; the best-scoring weights are kept
    # (0: no validation, the last weights are kept).
    eval_every: int = 0
    # Draft training only: the weight of the KL term towards the target's distribution.
    distill_weight: float = 0.0


@dataclass
class TrainResult:
    steps: int
    seconds: float
    tokens: int
    final_loss: float
    losses: list[tuple[int, float]] = field(default_factory=list)
    validation: list[tuple[int, float]] = field(default_factory=list)
    best_step: int | None = None  # the step whose weights were kept

    @property
    def tokens_per_second(self) -> float:
        return self.tokens / self.seconds if self.seconds > 0 else 0.0


def scalar(x: mx.array) -> float:
    """A one-element array as a Python float (evaluates it)."""
    return float(np.asarray(x))


def lr_schedule(s: TrainSettings) -> Callable[[mx.array], mx.array]:
    warmup = min(s.warmup_steps, max(1, s.steps // 10))
    decay = optim.cosine_decay(s.lr, max(1, s.steps - warmup), s.lr * s.min_lr_ratio)
    return optim.join_schedules([optim.linear_schedule(0.0, s.lr, warmup), decay], [warmup])


def _cross_entropy(logits: mx.array, targets: mx.array) -> mx.array:
    return nn.losses.cross_entropy(logits, targets, reduction="mean")


def _distill_kl(student: mx.array, teacher: mx.array) -> mx.array:
    """Mean over positions of KL(teacher || student), both given as logits."""
    log_p_t = teacher - mx.logsumexp(teacher, axis=-1, keepdims=True)
    log_p_s = student - mx.logsumexp(student, axis=-1, keepdims=True)
    return (mx.exp(log_p_t) * (log_p_t - log_p_s)).sum(axis=-1).mean()


def train(
    model: TinyLlama,
    sampler: BatchSampler,
    settings: TrainSettings,
    log: LogFn,
    *,
    teacher: TinyLlama | None = None,
    tag: str = "model",
    validate: Callable[[TinyLlama], float] | None = None,
) -> TrainResult:
    """Train *model* in place for ``settings.steps`` steps.

    With *validate* (a loss on files neither trained on nor reported on) and
    ``settings.eval_every``, the model ends with the weights of its best validation score:
    a small corpus repeated for many epochs gets memorized, and this stops that from being
    what ships.

    With a *teacher* (the draft's case), the loss mixes next-token cross-entropy with
    ``distill_weight`` times the KL divergence from the teacher's distribution: a draft that
    imitates the target is accepted more often in speculative decoding.
    """
    optimizer = optim.AdamW(learning_rate=lr_schedule(settings),
                            weight_decay=settings.weight_decay)
    alpha = settings.distill_weight if teacher is not None else 0.0

    def loss_fn(m: TinyLlama, x: mx.array, y: mx.array) -> mx.array:
        logits = m(x)
        loss = _cross_entropy(logits, y)
        if teacher is not None and alpha > 0:
            teacher_logits = mx.stop_gradient(teacher(x))
            loss = (1 - alpha) * loss + alpha * _distill_kl(logits, teacher_logits)
        return loss

    loss_and_grad = nn.value_and_grad(model, loss_fn)
    state = [model.state, optimizer.state]

    def step(x: mx.array, y: mx.array) -> mx.array:
        loss, grads = loss_and_grad(model, x, y)
        grads, _ = optim.clip_grad_norm(grads, settings.grad_clip)
        optimizer.update(model, grads)
        return loss

    if settings.compile:
        step = partial(mx.compile, inputs=state, outputs=state)(step)

    result = TrainResult(0, 0.0, 0, math.nan)
    best_params: dict[str, object] = {}
    tokens_per_step = settings.batch_size * settings.seq_len
    start = last_time = time.perf_counter()
    last_step = 0
    for i in range(1, settings.steps + 1):
        x, y = sampler.next()
        loss = step(x, y)
        mx.eval(state, loss)
        if i % settings.log_every == 0 or i == settings.steps:
            now = time.perf_counter()
            value = scalar(loss)
            log("train", model=tag, step=i, steps=settings.steps, loss=round(value, 4),
                lr=scalar(optimizer.learning_rate),
                tokens_per_s=round((i - last_step) * tokens_per_step / (now - last_time)))
            result.losses.append((i, value))
            last_time, last_step = now, i
        if validate is not None and settings.eval_every and (
            i % settings.eval_every == 0 or i == settings.steps
        ):
            score = validate(model)
            log("validation", model=tag, step=i, loss=round(score, 4))
            if not result.validation or score < min(v for _, v in result.validation):
                best_params, result.best_step = model.parameters(), i
            result.validation.append((i, score))
            last_time = time.perf_counter()  # keep validation out of the throughput figure
    if result.best_step is not None:
        # MLX arrays are immutable and updates rebind them, so the tree taken at the best
        # step still holds that step's weights.
        model.update(best_params)
        log("best", model=tag, step=result.best_step,
            loss=round(min(v for _, v in result.validation), 4))
    result.steps = settings.steps
    result.seconds = time.perf_counter() - start
    result.tokens = settings.steps * tokens_per_step
    result.final_loss = result.losses[-1][1] if result.losses else math.nan
    return result


def measure_step_seconds(
    make_model: Callable[[], TinyLlama],
    sampler_factory: Callable[[], BatchSampler],
    settings: TrainSettings,
    *,
    teacher: TinyLlama | None = None,
    steps: int = 12,
) -> float:
    """Seconds per training step, timed on a throw-away model (compile excluded).

    Used to turn a wall-clock budget into a step count *before* the real run, so the real
    run is a plain function of (seed, steps) and can be repeated exactly.
    """
    probe = replace(settings, steps=steps, log_every=steps // 3)
    times: list[float] = []

    def timing_log(event: str, **fields: object) -> None:
        times.append(time.perf_counter())

    train(make_model(), sampler_factory(), probe, timing_log, teacher=teacher, tag="probe")
    # The first interval includes compilation; time the later ones.
    return (times[-1] - times[0]) / (steps - probe.log_every)


@dataclass(frozen=True)
class HeldoutMetrics:
    loss: float
    perplexity: float
    accuracy: float  # greedy next token equals the actual next token
    positions: int


def _batched_logits(model: TinyLlama, inputs: np.ndarray, batch: int) -> list[mx.array]:
    return [model(mx.array(inputs[i : i + batch])) for i in range(0, len(inputs), batch)]


def evaluate(model: TinyLlama, windows: np.ndarray, batch: int = 16) -> HeldoutMetrics:
    """Mean next-token loss over held-out ``windows[n, seq_len + 1]``."""
    total_loss, correct, count = 0.0, 0, 0
    for i in range(0, len(windows), batch):
        chunk = windows[i : i + batch]
        x, y = mx.array(chunk[:, :-1]), mx.array(chunk[:, 1:])
        logits = model(x)
        losses = nn.losses.cross_entropy(logits, y, reduction="sum")
        hits = (logits.argmax(axis=-1) == y).sum()
        mx.eval(losses, hits)
        total_loss += scalar(losses)
        correct += int(scalar(hits))
        count += y.size
    mean = total_loss / count
    return HeldoutMetrics(mean, math.exp(mean), correct / count, count)


def greedy_agreement(
    target: TinyLlama, draft: TinyLlama, windows: np.ndarray, batch: int = 16
) -> float:
    """Fraction of held-out positions where the draft's greedy next token is the target's."""
    agree, count = 0, 0
    inputs = windows[:, :-1]
    for t_logits, d_logits in zip(
        _batched_logits(target, inputs, batch), _batched_logits(draft, inputs, batch),
        strict=True,
    ):
        same = (t_logits.argmax(axis=-1) == d_logits.argmax(axis=-1)).sum()
        agree += int(scalar(same))
        count += t_logits.shape[0] * t_logits.shape[1]
    return agree / count
