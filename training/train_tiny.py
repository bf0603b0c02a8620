"""Train vexel-tiny (tokenizer, target, draft) on the Python standard library; export GGUF.

    python -m training.train_tiny --out runs/tiny --time-budget 180        # GPU machine
    python -m training.train_tiny --out /tmp/t --preset tiny --steps 20 --corpus-limit 200000

Everything is a function of the arguments and the corpus: for a seed and a step count the run
repeats. ``--time-budget`` times a few probe steps first and turns the budget into step counts,
which are logged (pass them back with ``--steps/--draft-steps`` to repeat a run).
Writes into ``--out``: ``tokenizer.json``, ``vexel-tiny.gguf``, ``vexel-tiny-draft.gguf``,
``metrics.json``, ``train_log.jsonl`` and float16 checkpoints (``*.safetensors``).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import platform
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import mlx.core as mx
import numpy as np
from gguf import GGMLQuantizationType
from tokenizers import Tokenizer

from training import corpus as corpus_mod
from training.checkpoint import save_checkpoint
from training.data import BatchSampler, heldout_windows, join_documents
from training.model import LlamaConfig, TinyLlama, draft_config, target_config
from training.tokenizer import encode_documents, to_gguf_vocab, train_tokenizer
from training.train import (
    TrainSettings,
    evaluate,
    greedy_agreement,
    measure_step_seconds,
    train,
)
from vexel_core.errors import VexelError
from vexel_core.logs import configure_logging, get_logger

TARGET_FILE, DRAFT_FILE = "vexel-tiny.gguf", "vexel-tiny-draft.gguf"
MLX_VERSION = importlib.metadata.version("mlx")
EXPORT_TYPES = {"q8_0": GGMLQuantizationType.Q8_0, "f16": GGMLQuantizationType.F16,
                "f32": GGMLQuantizationType.F32}


def tiny_configs(vocab_size: int, context_length: int) -> tuple[LlamaConfig, LlamaConfig]:
    """Toy shapes for tests and smoke runs on a 2-core CPU."""
    target = LlamaConfig(vocab_size, hidden_size=128, n_layers=2, n_heads=4, n_kv_heads=2,
                         ffn_size=256, context_length=context_length)
    draft = LlamaConfig(vocab_size, hidden_size=32, n_layers=1, n_heads=2, n_kv_heads=1,
                        ffn_size=64, context_length=context_length)
    return target, draft


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m training.train_tiny", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", type=Path, required=True, help="output directory")
    p.add_argument("--corpus-root", type=Path, default=None,
                   help="directory of .py files (default: this interpreter's stdlib)")
    p.add_argument("--corpus-limit", type=int, default=None,
                   help="bytes of source per side (train, held-out) at most")
    p.add_argument("--heldout-percent", type=float, default=4.0,
                   help="share of files held out for the reported metrics")
    p.add_argument("--validation-percent", type=float, default=2.0,
                   help="share of files that choose the kept checkpoint")
    p.add_argument("--vocab-size", type=int, default=4096)
    p.add_argument("--preset", choices=["full", "tiny"], default="full",
                   help="full: the shipped shapes; tiny: toy shapes for tests")
    p.add_argument("--seq-len", type=int, default=512)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--steps", type=int, default=None, help="target steps")
    p.add_argument("--draft-steps", type=int, default=None, help="draft steps")
    p.add_argument("--epochs", type=float, default=None,
                   help="passes over the training tokens (sets the step counts)")
    p.add_argument("--time-budget", type=float, default=None,
                   help="seconds of training for both models; sets the step counts")
    p.add_argument("--draft-share", type=float, default=0.25,
                   help="fraction of --time-budget given to the draft")
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--draft-lr", type=float, default=3e-3)
    p.add_argument("--distill-weight", type=float, default=0.5,
                   help="weight of KL(target || draft) in the draft's loss")
    p.add_argument("--dtype", choices=["float32", "bfloat16"], default=None,
                   help="compute dtype (default: bfloat16 on a GPU, float32 on the CPU)")
    p.add_argument("--compile", action=argparse.BooleanOptionalAction, default=None,
                   help="mx.compile the training step (default: on a GPU only)")
    p.add_argument("--eval-windows", type=int, default=64, help="held-out windows to score")
    p.add_argument("--eval-every", type=int, default=100,
                   help="steps between validation scores (0: keep the last weights)")
    p.add_argument("--validation-windows", type=int, default=32)
    p.add_argument("--export", choices=[*EXPORT_TYPES, "none"], default="q8_0")
    p.add_argument("--no-checkpoint", action="store_true", help="skip safetensors checkpoints")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--log-every", type=int, default=25)
    p.add_argument("--log-format", choices=["console", "json"], default="console")
    args = p.parse_args(argv)
    if args.steps is None and args.time_budget is None and args.epochs is None:
        p.error("give --steps (and optionally --draft-steps), --epochs or --time-budget")
    return args


class RunLog:
    """Logs through structlog and keeps every event as a JSON line in the output directory."""

    def __init__(self, path: Path) -> None:
        self.file = path.open("w", encoding="utf-8")
        self.log = get_logger("training")
        self.start = time.perf_counter()

    def __call__(self, event: str, **fields: Any) -> None:
        fields["elapsed_s"] = round(time.perf_counter() - self.start, 2)
        self.log.info(event, **fields)
        self.file.write(json.dumps({"event": event, **fields}) + "\n")
        self.file.flush()


@dataclass
class RunOutput:
    metrics: dict[str, Any]
    tokenizer: Tokenizer
    target: TinyLlama  # float32 compute, as trained
    draft: TinyLlama


def run(args: argparse.Namespace) -> RunOutput:
    args.out.mkdir(parents=True, exist_ok=True)
    log = RunLog(args.out / "train_log.jsonl")
    gpu = mx.default_device() == mx.gpu
    if gpu:  # MLX's CUDA allocator uses managed memory: never let it ask for more than is free
        limit_gb = float(os.environ.get("VEXEL_DEVICE_MEMORY_LIMIT_GB", "64"))
        mx.set_memory_limit(int(limit_gb * 2**30))
    dtype = {"float32": mx.float32, "bfloat16": mx.bfloat16}[
        args.dtype or ("bfloat16" if gpu else "float32")]
    log("start", argv=sys.argv[1:], mlx=MLX_VERSION, python=platform.python_version(),
        device=str(mx.default_device()), dtype=str(dtype), seed=args.seed)

    # 1. Corpus and tokenizer.
    t0 = time.perf_counter()
    corpus = corpus_mod.load_corpus(args.corpus_root, heldout_percent=args.heldout_percent,
                                    validation_percent=args.validation_percent,
                                    limit_bytes=args.corpus_limit)
    log("corpus", **corpus.describe())
    tokenizer = train_tokenizer((f.text for f in corpus.train), args.vocab_size)
    tokenizer.save(str(args.out / "tokenizer.json"))
    vocab = to_gguf_vocab(tokenizer)
    train_stream = join_documents(
        encode_documents(tokenizer, [f.text for f in corpus.train]), vocab.eos_id)
    heldout_stream, validation_stream = (
        join_documents(encode_documents(tokenizer, [f.text for f in files]), vocab.eos_id)
        for files in (corpus.heldout, corpus.validation))
    vocab_size = len(vocab.tokens)
    log("tokenized", vocab_size=vocab_size, train_tokens=len(train_stream),
        heldout_tokens=len(heldout_stream), seconds=round(time.perf_counter() - t0, 1))

    # 2. Shapes.
    make_cfgs = tiny_configs if args.preset == "tiny" else lambda v, c: (
        target_config(v, c), draft_config(v, c))
    target_cfg, draft_cfg = make_cfgs(vocab_size, args.seq_len)
    n_target, n_draft = TinyLlama(target_cfg).num_params(), TinyLlama(draft_cfg).num_params()
    if n_draft * 8 > n_target:
        raise VexelError(f"draft has {n_draft} parameters, more than 1/8 of {n_target}")
    log("shapes", target=target_cfg.to_dict(), draft=draft_cfg.to_dict(),
        target_params=n_target, draft_params=n_draft)

    def settings(steps: int, lr: float, distill: float) -> TrainSettings:
        return TrainSettings(steps=steps, batch_size=args.batch_size, seq_len=args.seq_len,
                             lr=lr, log_every=args.log_every, distill_weight=distill,
                             eval_every=args.eval_every,
                             compile=gpu if args.compile is None else args.compile)

    def sampler(seed: int) -> BatchSampler:
        return BatchSampler(train_stream, args.seq_len, args.batch_size, seed)

    def new_model(cfg: LlamaConfig) -> TinyLlama:
        return TinyLlama(cfg, compute_dtype=dtype)

    # 3. Step counts (from a time budget, measured on throw-away models).
    target_steps, draft_steps = args.steps, args.draft_steps
    if args.time_budget is not None:
        t_step = measure_step_seconds(lambda: new_model(target_cfg), lambda: sampler(0),
                                      settings(12, args.lr, 0.0))
        d_step = measure_step_seconds(lambda: new_model(draft_cfg), lambda: sampler(0),
                                      settings(12, args.draft_lr, args.distill_weight),
                                      teacher=new_model(target_cfg))
        share = args.draft_share
        target_steps = target_steps or max(1, int(args.time_budget * (1 - share) / t_step))
        draft_steps = draft_steps or max(1, int(args.time_budget * share / d_step))
        log("budget", seconds=args.time_budget, target_step_s=round(t_step, 4),
            draft_step_s=round(d_step, 4), target_steps=target_steps, draft_steps=draft_steps)
    if args.epochs is not None:
        steps_per_epoch = len(train_stream) / (args.batch_size * args.seq_len)
        target_steps = target_steps or max(1, round(args.epochs * steps_per_epoch))
        log("epochs", epochs=args.epochs, steps_per_epoch=round(steps_per_epoch, 1),
            steps=target_steps)
    draft_steps = draft_steps or target_steps
    validation_windows = heldout_windows(validation_stream, args.seq_len,
                                         args.validation_windows)

    def validate(model: TinyLlama) -> float:
        return evaluate(model, validation_windows).loss
    assert target_steps is not None and draft_steps is not None

    # 4. Train the target, then the draft distilled from it.
    mx.random.seed(args.seed)
    target = new_model(target_cfg)
    target_run = train(target, sampler(args.seed), settings(target_steps, args.lr, 0.0), log,
                       tag="target", validate=validate)
    mx.random.seed(args.seed + 1)
    draft = new_model(draft_cfg)
    draft_run = train(draft, sampler(args.seed + 1),
                      settings(draft_steps, args.draft_lr, args.distill_weight), log,
                      teacher=target, tag="draft", validate=validate)

    # 5. Held-out metrics, in float32 (what the exported files compute).
    target.compute_dtype = draft.compute_dtype = mx.float32
    windows = heldout_windows(heldout_stream, args.seq_len, args.eval_windows)
    target_eval, draft_eval = evaluate(target, windows), evaluate(draft, windows)
    agreement = greedy_agreement(target, draft, windows)
    log("heldout", target=asdict(target_eval), draft=asdict(draft_eval),
        draft_target_agreement=round(agreement, 4))

    # 6. Files.
    files = []
    if args.export != "none":
        from training.export import export_gguf

        qtype = EXPORT_TYPES[args.export]
        for model, name, filename in ((target, "vexel-tiny", TARGET_FILE),
                                      (draft, "vexel-tiny-draft", DRAFT_FILE)):
            export_gguf(args.out / filename, model, vocab, name, qtype)
            files.append(filename)
    if not args.no_checkpoint:
        for model, stem in ((target, "target"), (draft, "draft")):
            files += [p.name for p in save_checkpoint(model, args.out, stem)]
    metrics = {
        "python": platform.python_version(), "mlx": MLX_VERSION,
        "device": str(mx.default_device()), "dtype": str(dtype), "seed": args.seed,
        "corpus": corpus.describe(), "heldout_percent": args.heldout_percent,
        "vocab_size": vocab_size, "seq_len": args.seq_len, "batch_size": args.batch_size,
        "train_tokens": int(len(train_stream)), "heldout_tokens": int(len(heldout_stream)),
        "validation_tokens": int(len(validation_stream)),
        "target": {"config": target_cfg.to_dict(), "params": n_target,
                   "train": _run_summary(target_run), "heldout": asdict(target_eval)},
        "draft": {"config": draft_cfg.to_dict(), "params": n_draft,
                  "train": _run_summary(draft_run), "heldout": asdict(draft_eval),
                  "distill_weight": args.distill_weight},
        "draft_target_agreement": agreement, "heldout_positions": target_eval.positions,
        "files": {f: (args.out / f).stat().st_size for f in files},
        "seconds_total": round(time.perf_counter() - log.start, 1),
    }
    (args.out / "metrics.json").write_text(json.dumps(metrics, indent=2))
    log("done", seconds=metrics["seconds_total"], files=metrics["files"])
    return RunOutput(metrics, tokenizer, target, draft)


def _run_summary(r: Any) -> dict[str, Any]:
    return {"steps": r.steps, "seconds": round(r.seconds, 2), "tokens": r.tokens,
            "tokens_per_s": round(r.tokens_per_second), "final_loss": r.final_loss,
            "losses": r.losses, "validation": r.validation, "kept_step": r.best_step}


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    configure_logging("info", args.log_format)
    np.seterr(all="raise")
    try:
        run(args)
    except VexelError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
