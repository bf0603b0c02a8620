"""vexel-tiny: the training program, its GGUF export, and the model files that ship.

The judge is llama.cpp on the same file: it must tokenize as our `tokenizers` tokenizer does
and compute the logits our MLX model computes. A short training run on a tiny corpus keeps
the program from rotting; the shipped files are checked as shipped.
"""

from __future__ import annotations

import math
from pathlib import Path

import mlx.core as mx
import numpy as np
import pytest
from gguf import GGMLQuantizationType

from tests.helpers import llama_cpp_logits, pearson
from training import gguf_layout
from training.corpus import SIDES, load_corpus
from training.data import BatchSampler, heldout_windows, join_documents
from training.export import export_gguf, load_gguf
from training.model import TinyLlama
from training.tokenizer import encode_documents, to_gguf_vocab
from training.train import TrainSettings, greedy_agreement, train
from training.train_tiny import RunOutput, parse_args, run, tiny_configs
from vexel_core.assets import default_model_path, draft_model_path
from vexel_core.gguf import GGUFFile

# Code, prose, digits, tabs, CRLF, runs of spaces, accents, CJK and an emoji (byte tokens):
# the places where two implementations of GPT-2's pre-tokenizer could disagree.
SAMPLE_TEXT = (
    "def fibonacci(n):\n    if n < 2:\n        return n\n"
    "    return fibonacci(n - 1) + fibonacci(n - 2)  # café, naïve, 日本語 😀\n\n"
    "\tx = {'a': 1_000, \"b\": [3.14e-5, 0x1F]}\r\n"
    "class Foo(Bar):   \n    '''It's the user's job; they'll see.'''\n\n\n"
    "    async def   run(self) -> None: ...   \n"
)


def llama_cpp_tokens(path: Path, text: str) -> list[int]:
    import llama_cpp  # a test dependency; the GPU machine, which runs only the gpu test, lacks it

    llm = llama_cpp.Llama(str(path), vocab_only=True, verbose=False)
    try:
        return list(llm.tokenize(text.encode(), add_bos=False, special=False))
    finally:
        llm.close()


# ---------------------------------------------------------------- a fresh tiny training run


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, RunOutput]:
    out = tmp_path_factory.mktemp("vexel-tiny-run")
    args = parse_args([
        "--out", str(out), "--preset", "tiny", "--corpus-limit", "150000",
        "--vocab-size", "400", "--seq-len", "64", "--batch-size", "8",
        "--steps", "24", "--draft-steps", "12", "--log-every", "6", "--eval-windows", "8",
        "--lr", "1e-2", "--export", "q8_0", "--no-compile", "--seed", "3",
    ])
    return out, run(args)


def test_training_program_learns_and_reports_heldout_metrics(
    fresh: tuple[Path, RunOutput],
) -> None:
    out, result = fresh
    m = result.metrics
    losses = [loss for _, loss in m["target"]["train"]["losses"]]
    assert losses[-1] < losses[0] - 0.3, losses
    for name in ("target", "draft"):
        heldout = m[name]["heldout"]
        assert heldout["positions"] == 8 * 64
        assert math.isclose(heldout["perplexity"], math.exp(heldout["loss"]), rel_tol=1e-9)
        # A fresh model guesses uniformly: log(400) = 6.0 nats. A few steps must beat that
        # clearly on files it never saw.
        assert heldout["loss"] < math.log(400) - 0.5, (name, heldout)
        assert m[name]["train"]["kept_step"] is not None  # validation chose a checkpoint
    assert m["draft"]["params"] * 8 <= m["target"]["params"]
    assert 0.0 <= m["draft_target_agreement"] <= 1.0
    assert (out / "train_log.jsonl").read_text().count('"event": "train"') == 4 + 2
    for f in ("vexel-tiny.gguf", "vexel-tiny-draft.gguf", "metrics.json", "tokenizer.json"):
        assert (out / f).is_file(), f


def test_train_validation_and_heldout_files_are_disjoint_and_stable() -> None:
    a = load_corpus(limit_bytes=100_000)
    names = {side: {f.relpath for f in getattr(a, side)} for side in SIDES}
    assert all(names.values())
    assert not names["train"] & names["validation"]
    assert not names["train"] & names["heldout"]
    assert not names["validation"] & names["heldout"]
    # The side of a file depends on its path alone, not on which other files are read.
    only_heldout = load_corpus(sides=("heldout",), limit_bytes=100_000)
    assert [f.relpath for f in only_heldout.heldout] == [f.relpath for f in a.heldout]


def test_training_is_deterministic_for_a_seed(fresh: tuple[Path, RunOutput]) -> None:
    _, result = fresh
    tokenizer = result.tokenizer
    corpus = load_corpus(limit_bytes=60_000)
    stream = join_documents(encode_documents(tokenizer, [f.text for f in corpus.train]),
                            to_gguf_vocab(tokenizer).eos_id)
    cfg, _ = tiny_configs(tokenizer.get_vocab_size(), 32)
    settings = TrainSettings(steps=4, batch_size=4, seq_len=32, log_every=1, compile=False)

    def losses(seed: int) -> list[float]:
        mx.random.seed(seed)
        model = TinyLlama(cfg)
        r = train(model, BatchSampler(stream, 32, 4, seed), settings, lambda *a, **k: None)
        return [loss for _, loss in r.losses]

    first = losses(7)
    assert losses(7) == first  # bit for bit on the CPU
    assert losses(8) != first


def test_gguf_metadata_is_complete(fresh: tuple[Path, RunOutput]) -> None:
    out, result = fresh
    cfg = result.target.config
    with GGUFFile(out / "vexel-tiny.gguf") as g:
        assert g.architecture == "llama"
        expected = {
            "general.name": "vexel-tiny",
            "general.file_type": 7,  # LLAMA_FTYPE_MOSTLY_Q8_0
            "llama.context_length": cfg.context_length,
            "llama.embedding_length": cfg.hidden_size,
            "llama.block_count": cfg.n_layers,
            "llama.feed_forward_length": cfg.ffn_size,
            "llama.attention.head_count": cfg.n_heads,
            "llama.attention.head_count_kv": cfg.n_kv_heads,
            "llama.rope.dimension_count": cfg.head_dim,
            "llama.vocab_size": cfg.vocab_size,
            "tokenizer.ggml.model": "gpt2",
            "tokenizer.ggml.pre": "gpt-2",
            "tokenizer.ggml.add_bos_token": False,
            "tokenizer.ggml.eos_token_id": 0,
            "tokenizer.ggml.bos_token_id": 0,
        }
        assert {k: g.get(k) for k in expected} == expected
        assert g.get("llama.rope.freq_base") == pytest.approx(cfg.rope_base)
        assert g.get("llama.attention.layer_norm_rms_epsilon") == pytest.approx(cfg.rms_eps)
        assert g.get("tokenizer.ggml.tokens")[0] == "<|endoftext|>"
        assert g.get("tokenizer.ggml.token_type")[0] == 3  # CONTROL
        assert len(g.get("tokenizer.ggml.merges")) == cfg.vocab_size - 257
        assert g.tensor("blk.0.attn_q.weight").ggml_type == GGMLQuantizationType.Q8_0
        assert g.tensor("blk.0.attn_norm.weight").ggml_type == GGMLQuantizationType.F32


def test_llama_cpp_tokenizes_fresh_export_like_tokenizers(
    fresh: tuple[Path, RunOutput],
) -> None:
    out, result = fresh
    heldout_text = load_corpus(sides=("heldout",)).heldout[0].text[:3000]
    for text in (SAMPLE_TEXT, heldout_text):
        ours = result.tokenizer.encode(text, add_special_tokens=False).ids
        assert llama_cpp_tokens(out / "vexel-tiny.gguf", text) == ours


def _logit_errors(path: Path, model: TinyLlama, tokens: list[int]) -> tuple[float, float]:
    """(Pearson, max |difference| / std) of llama.cpp's logits against our MLX model's."""
    theirs = llama_cpp_logits(path, tokens, n_ctx=64)
    ours = np.array(model(mx.array([tokens]))[0])
    return pearson(theirs, ours), float(np.abs(theirs - ours).max() / ours.std())


@pytest.mark.parametrize("ggml_type", [GGMLQuantizationType.F32, GGMLQuantizationType.Q8_0])
def test_llama_cpp_computes_what_the_mlx_model_computes(
    fresh: tuple[Path, RunOutput], tmp_path: Path, ggml_type: GGMLQuantizationType
) -> None:
    out, result = fresh
    vocab = to_gguf_vocab(result.tokenizer)
    tokens = result.tokenizer.encode(SAMPLE_TEXT).ids[:64]
    for model in (result.target, result.draft):
        path = export_gguf(tmp_path / "m.gguf", model, vocab, "fresh", ggml_type)
        r, err = _logit_errors(path, model, tokens)
        # F32: only float rounding differs (seen: err ~5e-4). Q8_0: 8-bit blocks of 32 give
        # each weight ~0.4% error (seen: Pearson 0.99999, err ~0.02). A Q/K row order that
        # does not match llama.cpp's rotary layout gives err ~0.4 (next test).
        assert r >= 0.999, r
        assert err <= (0.01 if ggml_type == GGMLQuantizationType.F32 else 0.1), err


def test_rotary_row_order_matters_and_matches_llama_cpp(
    fresh: tuple[Path, RunOutput], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With sharp attention the Q/K row order decides the result: ours matches, HF's does not.

    A few training steps leave attention too weak for the rotary order to show (seen: 1.5%
    error with HF order). A random model with W_q and W_k doubled attends sharply.
    """
    _, result = fresh
    mx.random.seed(5)
    sharp = TinyLlama(tiny_configs(result.tokenizer.get_vocab_size(), 64)[0])
    for layer in sharp.layers:
        layer.attn.wq.weight = layer.attn.wq.weight * 2
        layer.attn.wk.weight = layer.attn.wk.weight * 2
    vocab, tokens = to_gguf_vocab(result.tokenizer), result.tokenizer.encode(SAMPLE_TEXT).ids[:64]
    path = export_gguf(tmp_path / "sharp.gguf", sharp, vocab, "sharp", GGMLQuantizationType.F32)
    assert _logit_errors(path, sharp, tokens)[1] <= 0.01  # seen: 0.002
    monkeypatch.setattr(gguf_layout, "permute_qk", lambda w, n_heads: w)
    path = export_gguf(tmp_path / "hf.gguf", sharp, vocab, "hf-order", GGMLQuantizationType.F32)
    assert _logit_errors(path, sharp, tokens)[1] > 0.3  # seen: 2.8


def test_gguf_import_is_the_inverse_of_export(fresh: tuple[Path, RunOutput]) -> None:
    out, result = fresh
    model, tokenizer = load_gguf(out / "vexel-tiny.gguf")
    assert tokenizer.encode(SAMPLE_TEXT).ids == result.tokenizer.encode(SAMPLE_TEXT).ids
    tokens = mx.array([result.tokenizer.encode(SAMPLE_TEXT).ids[:64]])
    # Q8_0 round trip: the same function up to quantization error.
    assert pearson(np.array(model(tokens)), np.array(result.target(tokens))) >= 0.999


# ---------------------------------------------------------------- the files that ship


def test_shipped_files_fit_the_size_budget() -> None:
    total = default_model_path().stat().st_size + draft_model_path().stat().st_size
    assert total <= 20_000_000, total


@pytest.mark.parametrize("which", ["target", "draft"])
def test_llama_cpp_loads_shipped_file_and_tokenizes_like_tokenizers(which: str) -> None:
    path = default_model_path() if which == "target" else draft_model_path()
    _, tokenizer = load_gguf(path)  # the trained vocabulary and merges, rebuilt in `tokenizers`
    heldout_text = load_corpus(sides=("heldout",)).heldout[0].text[:3000]
    for text in (SAMPLE_TEXT, heldout_text):
        ours = tokenizer.encode(text, add_special_tokens=False).ids
        assert llama_cpp_tokens(path, text) == ours
    # ...and llama.cpp runs it: a forward pass gives finite logits of the right width.
    logits = llama_cpp_logits(path, tokenizer.encode(SAMPLE_TEXT).ids[:32], n_ctx=64)
    assert logits.shape[1] == tokenizer.get_vocab_size() and np.isfinite(logits).all()
    with GGUFFile(path) as g:
        assert g.get("general.name") == ("vexel-tiny" if which == "target" else "vexel-tiny-draft")


def test_shipped_draft_is_small_and_agrees_with_target_on_heldout_code() -> None:
    target, tokenizer = load_gguf(default_model_path())
    draft, _ = load_gguf(draft_model_path())
    assert draft.num_params() * 8 <= target.num_params()
    # Held-out files of this interpreter's stdlib: never trained on (the split hashes the
    # path, so it is the same split whatever Python trained). Four windows of 256 tokens,
    # spread evenly over all held-out files; 1024 positions give a standard error of ~1.6%.
    corpus = load_corpus(sides=("heldout",))
    eos = tokenizer.token_to_id("<|endoftext|>")
    stream = join_documents(encode_documents(tokenizer, [f.text for f in corpus.heldout]), eos)
    windows = heldout_windows(stream, seq_len=256, max_windows=4)
    agreement = greedy_agreement(target, draft, windows, batch=4)
    assert agreement >= 0.5, agreement


# ---------------------------------------------------------------- the GPU's attention kernel


def _reference_attention(q: mx.array, k: mx.array, v: mx.array) -> mx.array:
    """Causal GQA attention in plain float32 MLX operations (the oracle)."""
    q, k, v = (t.astype(mx.float32) for t in (q, k, v))
    repeat = q.shape[1] // k.shape[1]
    k, v = mx.repeat(k, repeat, axis=1), mx.repeat(v, repeat, axis=1)
    scores = (q * q.shape[-1] ** -0.5) @ k.transpose(0, 1, 3, 2)
    t = q.shape[2]
    scores = mx.where(mx.tril(mx.ones((t, t), dtype=mx.bool_)), scores, -mx.inf)
    return mx.softmax(scores, axis=-1) @ v


@pytest.mark.gpu
@pytest.mark.parametrize(("heads", "kv_heads", "head_dim"), [(6, 2, 64), (4, 2, 32)])
def test_fused_attention_gradients_match_reference_in_bf16(
    heads: int, kv_heads: int, head_dim: int
) -> None:
    """Training on the GPU differentiates mx.fast.scaled_dot_product_attention in bf16 with
    the target's and the draft's head layouts; its gradients must be the reference's."""
    mx.random.seed(11)
    b, t = 4, 256
    q = mx.random.normal((b, heads, t, head_dim)).astype(mx.bfloat16)
    k = mx.random.normal((b, kv_heads, t, head_dim)).astype(mx.bfloat16)
    v = mx.random.normal((b, kv_heads, t, head_dim)).astype(mx.bfloat16)
    w = mx.random.normal((b, heads, t, head_dim))

    def fused(q: mx.array, k: mx.array, v: mx.array) -> mx.array:
        out = mx.fast.scaled_dot_product_attention(q, k, v, scale=head_dim**-0.5,
                                                   mask="causal")
        return (out.astype(mx.float32) * w).sum()

    def reference(q: mx.array, k: mx.array, v: mx.array) -> mx.array:
        return (_reference_attention(q, k, v) * w).sum()

    got = mx.grad(fused, argnums=(0, 1, 2))(q, k, v)
    want = mx.grad(reference, argnums=(0, 1, 2))(q, k, v)
    for name, g, r in zip("qkv", got, want, strict=True):
        g, r = g.astype(mx.float32), r.astype(mx.float32)
        # bf16 inputs and outputs: ~3 significant digits; 3% of the largest gradient allows
        # rounding, and a wrong head mapping or mask gives errors of order 100%.
        err = float(mx.abs(g - r).max() / mx.abs(r).max())
        assert err < 0.03, (name, err)
