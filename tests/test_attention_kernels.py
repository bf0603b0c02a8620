"""Paged decode attention against a float64 numpy computation, on fresh random pools,
shuffled block tables, GQA, head sizes 64/80/96/128/256, soft-cap and sliding window, with
the output poisoned first. Paths: the GPU kernel where MLX has a GPU, else the reference
(``device``); the CUDA kernel's own source compiled for the CPU (``emulated_cuda``,
tests/kernel_emulation), so CI checks its indexing, lane groups and merges; and the Metal
kernels, which no Apple compiler has seen, as the wrapper hands them to
``mx.fast.metal_kernel`` (planned by `kernels.paged_decode` with backend "metal"), compiled
for the CPU (``emulated_metal``, tests/emulation.py). The kernel paths run at every warp count
the launcher chooses among (`kernels.WARP_COUNTS`) that the heads' shared memory allows (on
Metal, Apple GPUs' 32 KiB), with one and three spans."""

from __future__ import annotations

import functools
from pathlib import Path

import mlx.core as mx
import numpy as np
import pytest

from tests import emulation
from tests.helpers import benchmark_module
from vexel_core.attention import kernels
from vexel_core.attention.backends import attend_by_hand
from vexel_core.gpu import kernel_backend
from vexel_core.model.layers import RoPE

BS = 16


def numpy_attention(q, k_pool, v_pool, tables, ctx, scale, softcap, window):  # type: ignore[no-untyped-def]
    B, Hq, D = q.shape
    Hkv = k_pool.shape[1]
    out = np.zeros((B, Hq, D))
    for b in range(B):
        slots = [tables[b][t // BS] * BS + t % BS for t in range(ctx[b])]
        first = max(0, ctx[b] - window) if window else 0
        slots = slots[first:]
        for h in range(Hq):
            kv = h // (Hq // Hkv)
            s = (k_pool[slots, kv].astype(np.float64) @ q[b, h].astype(np.float64)) * scale
            if softcap:
                s = softcap * np.tanh(s / softcap)
            p = np.exp(s - s.max())
            out[b, h] = p @ v_pool[slots, kv].astype(np.float64) / p.sum()
    return out


def reference_decode(q, k_pool, v_pool, tables, ctx, scale, softcap, window):  # type: ignore[no-untyped-def]
    """The CPU path: gather whole blocks, mask, attend by hand."""
    B = q.shape[0]
    idx = (tables[:, :, None] * BS + mx.arange(BS)[None, None, :]).reshape(B, -1)
    keys, values = k_pool[idx].swapaxes(1, 2), v_pool[idx].swapaxes(1, 2)
    j = mx.arange(idx.shape[1])[None, :]
    mask = j < ctx[:, None]
    if window:
        mask = mask & (j >= ctx[:, None] - window)
    out = attend_by_hand(q[:, :, None, :], keys, values, mask[:, None, None, :], scale, softcap)
    return out[:, :, 0, :]


CASES = [  # (batch, Hq, Hkv, D, context lengths, softcap, window)
    (3, 4, 4, 64, [1, 17, 40], None, None),
    (4, 32, 8, 128, [5, 130, 64, 257], None, None),
    (2, 16, 8, 256, [33, 300], 50.0, 32),  # Gemma 2 heads: soft-cap and window
    (2, 32, 32, 80, [16, 99], None, None),  # Phi-2 heads
    (1, 8, 1, 96, [200], None, 7),
    (3, 32, 8, 128, [700, 2, 97], None, None),  # many rounds of every lane group
]


def random_pools(case, rng):  # type: ignore[no-untyped-def]
    """A case's block tables (each sequence's blocks scattered over the pool, five spare), q
    and the pools, standard normal float32."""
    B, Hq, Hkv, D, ctx, _, _ = case
    nb = max(-(-c // BS) for c in ctx)
    n_blocks = B * nb + 5
    tables = rng.permutation(n_blocks)[: B * nb].reshape(B, nb).astype(np.int32)
    q = rng.standard_normal((B, Hq, D)).astype(np.float32)
    k_pool = rng.standard_normal((n_blocks * BS, Hkv, D)).astype(np.float32)
    v_pool = rng.standard_normal((n_blocks * BS, Hkv, D)).astype(np.float32)
    return tables, q, k_pool, v_pool


@pytest.fixture(scope="session")
def emulator(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """tests/kernel_emulation/run_attention.cpp built against the kernel's source."""
    cuda = Path(kernels.__file__).parent / "cuda"
    return emulation.build(tmp_path_factory.mktemp("attention"), "run_attention.cpp", [cuda])


def emulated_decode(binary, q, k_pool, v_pool, tables, ctx, scale, softcap, window, splits,  # type: ignore[no-untyped-def]
                    warps, new=None, rope=None, new_heads=(0, 0)):
    """The emulated kernel's output; with *new* = (k_new, v_new, new_slots), rows of k_new and
    v_new ``[B, H, DS]`` (DS >= D: the first D elements are the row; KV head h's at heads
    ``new_heads[0] + h`` and ``new_heads[1] + h``, as in a packed launch), the kernel's cache
    write too, and the output comes with the pools as the kernel left them. *rope*: a `RoPE`
    the kernel applies to q and the new keys (`Rotation`)."""
    B, Hq, D = q.shape
    Hkv = k_pool.shape[1]
    ds = D if new is None else new[0].shape[2]
    args = [B, Hq, Hkv, D, k_pool.shape[0] // BS, BS, tables.shape[1],
            int(q.dtype == mx.bfloat16), repr(scale), softcap or 0.0, window or 0, splits, warps,
            int(new is not None), ds]
    rotation = None if rope is None else rope.rotation()
    args += [0, 0, 0.0, 1.0] if rotation is None else [
        rotation.dims, int(rotation.interleaved), repr(rotation.scale),
        repr(rotation.attn_factor)]
    args += [Hkv if new is None else new[0].shape[1], *new_heads]
    data = b"".join(np.array(a.view(mx.uint8)).tobytes() for a in (q, k_pool, v_pool))
    data += np.asarray(tables, np.int32).tobytes() + np.asarray(ctx, np.int32).tobytes()
    if new is not None:
        data += b"".join(np.array(a.view(mx.uint8)).tobytes() for a in new[:2])
        data += np.asarray(new[2], np.int32).tobytes()
    if rotation is not None:
        data += np.array(rotation.inv_freq).astype(np.float32).tobytes()
    raw = np.frombuffer(emulation.run(binary, args, data), np.uint8)
    out = mx.array(raw[: q.nbytes]).view(q.dtype).reshape(B, Hq, D)
    if new is None:
        return out
    pools = mx.array(raw[q.nbytes:]).view(q.dtype).reshape(2, *k_pool.shape)
    return out, pools[0], pools[1]


def metal_decode(recorder, q, k_pool, v_pool, tables, ctx, scale, softcap, window, splits,  # type: ignore[no-untyped-def]
                 warps, new=None, rope=None):
    """`kernels.paged_decode` (with *new* = (k_new, v_new, new_slots), rows ``[B, Hkv, DS]``
    of which the first D are the row: `kernels.paged_decode_writing` on views of them; or
    *new* = (heads, None, new_slots), heads ``[B, Hq + 2 Hkv, DS]``: a packed launch on a view
    of them, q unused) for backend "metal", its kernels given to *recorder*
    (`emulation.MetalRecorder`); the pools are written in place, as on the GPU."""
    D = q.shape[2]
    options = {"block_size": BS, "scale": scale, "softcap": softcap, "window": window,
               "backend": "metal", "init_value": float("nan"), "splits": splits,
               "warps": warps, "max_context": max(ctx)}
    mt, mc = mx.array(tables), mx.array(np.array(ctx, dtype=np.int32))
    with emulation.metal_kernels_on_cpu(recorder, kernels._kernel, kernels._merge_kernel):
        if new is None:
            return kernels.paged_decode(q, k_pool, v_pool, mt, mc, **options)
        if new[1] is None:
            heads = new[0]
            view = heads[:, :, :D]
            recorder.views = [(view, emulation.MetalInput(
                np.array(heads.reshape(-1).view(mx.uint8)), 0, view.shape,
                (heads.shape[1] * heads.shape[2], heads.shape[2], 1)))]
            out, _ = kernels.paged_decode_writing(
                view, None, None, mx.array(new[2]), k_pool, v_pool, mt, mc,
                after=mx.array([0], dtype=mx.int32),
                rotation=None if rope is None else rope.rotation(), packed=True, **options)
            assert recorder.binary is None or recorder.views_bound == 3  # q, k_new, v_new
            return out
        k_new, v_new = (a[:, :, :D] for a in new[:2])
        recorder.views = [(view, emulation.MetalInput(
            np.array(wide.reshape(-1).view(mx.uint8)), 0, view.shape,
            (wide.shape[1] * wide.shape[2], wide.shape[2], 1)))
            for view, wide in ((k_new, new[0]), (v_new, new[1]))]
        out, _ = kernels.paged_decode_writing(
            q, k_new, v_new, mx.array(new[2]), k_pool, v_pool, mt, mc,
            after=mx.array([0], dtype=mx.int32),
            rotation=None if rope is None else rope.rotation(), **options)
        # the new rows read through their strides
        assert recorder.binary is None or recorder.views_bound == 2
        return out


# The Metal emulation costs about a second a launch on two CPU cores and a compile a variant:
# it reads at 4 warps in one span and at 8 in three (so with and without the merge), writes
# at 4 in three spans; not the longest context (CASES[-1], the heads of CASES[1]: 2.5 s a
# launch).
METAL_PATHS = [("emulated_metal", 1, 4), ("emulated_metal", 3, 8)]
METAL_WRITING_PATHS = [("emulated_metal", 3, 4)]


def metal_supports(case, dtype, warps) -> bool:  # type: ignore[no-untyped-def]
    B, Hq, Hkv, D, *_ = case
    return case != CASES[-1] and kernels.supports(D, Hq // Hkv, dtype, warps, "metal")


@pytest.fixture(scope="session")
def metal_emulator(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """tests/kernel_emulation/run_metal.cpp with every Metal kernel the tests below launch,
    as the wrapper makes them (recorded from its calls on placeholder arrays)."""
    recorder = emulation.MetalRecorder()
    rng = np.random.default_rng(0)
    for case in CASES:
        tables, q, k_pool, v_pool = random_pools(case, rng)
        B, Hq, Hkv, D, ctx, softcap, window = case
        for dtype in DTYPES:
            q_, k_, v_ = (mx.array(a).astype(dtype) for a in (q, k_pool, v_pool))
            wide = mx.zeros((B, Hkv, D + 8), dtype=dtype)
            slots = np.zeros(B, dtype=np.int32)
            for paths, new in ((METAL_PATHS, None), (METAL_WRITING_PATHS, (wide, wide, slots))):
                # the writing tests rotate (`ROPES`): MLX passes the placeholder of a launch
                # that does not in constant memory, so the two are kernels apart
                rope = None if new is None else ROPES[CASES.index(case)]
                for _, splits, warps in paths:
                    if metal_supports(case, dtype, warps):
                        metal_decode(recorder, q_, k_, v_, tables, ctx, 1.0, softcap, window,
                                     splits, warps, new, rope)
    return emulation.build_metal(tmp_path_factory.mktemp("metal_attention"), recorder.kernels)


def test_metal_sources_keep_address_spaces_apart(tmp_path: Path) -> None:
    # as in test_quant_kernels: a pointer moved out of threadgroup or device memory would
    # compile on the CPU but not for Metal
    recorder = emulation.MetalRecorder()
    case = CASES[2]  # soft-cap and window: every branch
    tables, q, k_pool, v_pool = random_pools(case, np.random.default_rng(0))
    B, Hq, Hkv, D, ctx, softcap, window = case
    args = [mx.array(a).astype(mx.bfloat16) for a in (q, k_pool, v_pool)]
    wide = mx.zeros((B, Hkv, D + 8), dtype=mx.bfloat16)
    for new in (None, (wide, wide, np.zeros(B, dtype=np.int32))):
        metal_decode(recorder, *args, tables, ctx, 1.0, softcap, window, 3, 4, new)
    errors = emulation.metal_address_space_errors(tmp_path, recorder.kernels)
    assert errors == {"threadgroup": "", "device": ""}, "\n".join(errors.values())


# (path, spans, warps); warps None: the launcher's choice for the batch and its longest context
PATHS = [("device", 1, None), ("device", 3, None),
         *(pytest.param("device", s, w, marks=pytest.mark.gpu, id=f"device-{s}-{w}warps")
           for s in (1, 3) for w in kernels.WARP_COUNTS),
         *(("emulated_cuda", s, w) for s in (1, 3) for w in kernels.WARP_COUNTS),
         *METAL_PATHS]
DTYPES = [mx.float32, mx.bfloat16]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"B{c[0]}-H{c[1]}/{c[2]}-D{c[3]}")
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("path", "splits", "warps"), PATHS)
def test_paged_decode_matches_float64(case, dtype, path, splits, warps, rng, request) -> None:  # type: ignore[no-untyped-def]
    """*splits* 3: each context in three spans merged after (a small batch's path); spans
    of short sequences are empty. *warps* 16 walks up to 512 tokens a round, so the longer
    contexts take several rounds at every count."""
    B, Hq, Hkv, D, ctx, softcap, window = case
    if warps and not kernels.supports(D, Hq // Hkv, dtype, warps):
        pytest.skip(f"{warps} warps' shared memory is over the limit for these heads")
    if path == "emulated_metal" and not metal_supports(case, dtype, warps):
        pytest.skip(f"{warps} warps' threadgroup memory is over Apple GPUs' 32 KiB, or the "
                    "longest context (see METAL_PATHS)")
    tables, q, k_pool, v_pool = random_pools(case, rng)
    scale = D**-0.5
    args = [mx.array(a).astype(dtype) for a in (q, k_pool, v_pool)]
    mt, mc = mx.array(tables), mx.array(np.array(ctx, dtype=np.int32))
    if path == "emulated_metal":
        recorder = emulation.MetalRecorder(request.getfixturevalue("metal_emulator"))
        got = metal_decode(recorder, *args, tables, ctx, scale, softcap, window, splits, warps)
    elif path == "emulated_cuda":
        binary = request.getfixturevalue("emulator")
        got = emulated_decode(binary, *args, tables, ctx, scale, softcap, window, splits,
                              warps or kernels.WARP_COUNTS[0])
    elif kernel_backend() is not None:
        got = kernels.paged_decode(*args, mt, mc, block_size=BS, scale=scale, softcap=softcap,
                                   window=window, init_value=float("nan"), splits=splits,
                                   warps=warps, max_context=max(ctx))
    elif splits > 1:
        pytest.skip("the reference path has no spans")
    else:
        got = reference_decode(*args, mt, mc, scale, softcap, window)
    got = np.array(got.astype(mx.float32))
    if path == "device" and kernel_backend() == "cuda":  # the split merge's counts reset
        assert not np.array(kernels._counters(B * Hkv)).any()
    # Inputs as the kernel saw them (rounded to dtype), reference in float64.
    qr, kr, vr = (np.array(a.astype(mx.float32)) for a in args)
    want = numpy_attention(qr, kr, vr, tables, ctx, scale, softcap, window)
    # float32: summation order only (1e-4 of the output scale); bfloat16: the output is
    # rounded to 8 bits of mantissa (2^-8 relative) plus accumulated rounding.
    tol = 1e-4 if dtype == mx.float32 else 1.6e-2
    assert not np.isnan(got).any()
    np.testing.assert_allclose(got, want, rtol=0, atol=tol * np.abs(want).max())


# The rotation the writing kernel applies to q and the new keys, per case (its index in
# CASES): adjacent pairs; Llama 3's per-pair factors; halves (Gemma 2); Phi-2's partial rotary
# (32 of 80 features); a position scale and attn_factor; none (the plain write).
ROPES = [
    RoPE(64),
    RoPE.with_factors(128, 500000.0, mx.array(np.linspace(1.0, 8.0, 64, dtype=np.float32))),
    RoPE(256, interleaved=False),
    RoPE(32, interleaved=False),
    RoPE(96, interleaved=False, scale=0.25, attn_factor=1.2),
    None,
]


def rotated(rope: RoPE | None, x: mx.array, positions: mx.array) -> mx.array:
    """*x* ``[B, H, D]`` rotated by plain MLX operations in float32 (`RoPE.by_hand`, then
    attn_factor on the rotated features), rounded once to x's dtype, as the kernel does."""
    if rope is None:
        return x
    out = rope.by_hand(x.astype(mx.float32), positions)
    factor = mx.where(mx.arange(x.shape[-1]) < rope.dims, rope.attn_factor, 1.0)
    return (out * factor).astype(x.dtype)


WRITING_PATHS = [*(pytest.param("device", s, w, marks=pytest.mark.gpu, id=f"device-{s}-{w}warps")
                   for s in (1, 3) for w in kernels.WARP_COUNTS),
                 *(("emulated_cuda", s, w) for s in (1, 3) for w in kernels.WARP_COUNTS),
                 *METAL_WRITING_PATHS]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"B{c[0]}-H{c[1]}/{c[2]}-D{c[3]}")
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("path", "splits", "warps"), WRITING_PATHS)
def test_paged_decode_writing_stores_the_new_rows_and_attends_to_them(  # type: ignore[no-untyped-def]
        case, dtype, path, splits, warps, rng, request) -> None:
    """The fused cache write of a decode step: each sequence's newest token (the last of its
    context) has NaN rows in the pools before the launch, and its rows come as views (a gap
    after each row; on the GPU also sliced tables); q and the new keys come unrotated, the
    kernel rotating them at that token's position (`ROPES`). The output must match float64
    attention over the new rows, the pools must hold the new rows at their slots (rotated as
    plain MLX rotates them), and every other row must be untouched (compared bit for bit).
    Every other case launches packed: q's, the keys' and the values' heads one array, the
    fused projection's (`Unrotated.heads`).
    There is no CPU path for this kernel: the CPU writes with `KVPool.write`, which
    tests/test_kv_pool.py covers."""
    B, Hq, Hkv, D, ctx, softcap, window = case
    rope = ROPES[CASES.index(case)]
    if warps and not kernels.supports(D, Hq // Hkv, dtype, warps):
        pytest.skip(f"{warps} warps' shared memory is over the limit for these heads")
    if path == "emulated_metal" and not metal_supports(case, dtype, warps):
        pytest.skip(f"{warps} warps' threadgroup memory is over Apple GPUs' 32 KiB, or the "
                    "longest context (see METAL_PATHS)")
    if path == "device" and kernel_backend() is None:
        pytest.skip("the kernel needs a GPU (the emulated path runs its body on the CPU)")
    tables, q, k_pool, v_pool = random_pools(case, rng)
    nb = tables.shape[1]
    slots = np.array([tables[b][(c - 1) // BS] * BS + (c - 1) % BS for b, c in enumerate(ctx)],
                     dtype=np.int32)
    k_pool[slots], v_pool[slots] = np.nan, np.nan  # what the kernel must overwrite first
    gap = 8  # the new rows with a gap after each: [B, Hkv, D + gap], the row its first D
    k_wide, v_wide = (rng.standard_normal((B, Hkv, D + gap)).astype(np.float32) for _ in "kv")
    scale = D**-0.5
    mq, mk, mv = (mx.array(a).astype(dtype) for a in (q, k_pool, v_pool))
    mkw, mvw = (mx.array(a).astype(dtype) for a in (k_wide, v_wide))
    packed = CASES.index(case) % 2 == 1
    # packed: [B, Hq + 2 Hkv, D + gap], q's heads, the new keys', the new values'
    heads = mx.concatenate([mx.pad(mq, [(0, 0), (0, 0), (0, gap)]), mkw, mvw], axis=1)
    k_want, v_want = (np.array(a.astype(mx.float32)) for a in (mk, mv))  # before the write
    if path == "emulated_metal":
        recorder = emulation.MetalRecorder(request.getfixturevalue("metal_emulator"))
        got = metal_decode(recorder, mq, mk, mv, tables, ctx, scale, softcap, window, splits,
                           warps, new=(heads, None, slots) if packed else (mkw, mvw, slots),
                           rope=rope)
        k_after, v_after = mk, mv  # written in place
    elif path == "emulated_cuda":
        binary = request.getfixturevalue("emulator")
        got, k_after, v_after = emulated_decode(
            binary, mq, mk, mv, tables, ctx, scale, softcap, window, splits, warps,
            new=(heads, heads, slots) if packed else (mkw, mvw, slots), rope=rope,
            new_heads=(Hq, Hq + Hkv) if packed else (0, 0))
    else:
        wide_tables = mx.array(np.pad(tables, ((0, 0), (0, 3))))
        q_, k_, v_ = ((heads[:, :, :D], None, None) if packed
                      else (mq, mkw[:, :, :D], mvw[:, :, :D]))
        got, token = kernels.paged_decode_writing(
            q_, k_, v_, mx.array(slots), mk, mv, wide_tables[:, :nb],
            mx.array(np.array(ctx, dtype=np.int32)), block_size=BS, scale=scale,
            softcap=softcap, window=window, init_value=float("nan"), splits=splits,
            warps=warps, max_context=max(ctx), after=mx.array([0], dtype=mx.int32),
            rotation=None if rope is None else rope.rotation(), packed=packed)
        mx.eval(got, token)
        assert token[0].item() == 0
        k_after, v_after = mk, mv  # written in place
    positions = mx.array(np.array(ctx, dtype=np.int32) - 1)
    k_want[slots] = np.array(rotated(rope, mkw[:, :, :D], positions).astype(mx.float32))
    v_want[slots] = np.array(mvw[:, :, :D].astype(mx.float32))
    others = np.setdiff1d(np.arange(k_want.shape[0]), slots)
    for name, after, want in (("k", k_after, k_want), ("v", v_after, v_want)):
        after = np.array(after.astype(mx.float32))
        np.testing.assert_array_equal(after[others], want[others],
                                      err_msg=f"{name} pool's other rows after the write")
        # The new keys' angles: the kernel multiplies by inverse frequencies, MLX divides by
        # wavelengths (1 float32 rounding apart, ~4e-5 rad at position 700); in bfloat16 that
        # may move a rotated element by one unit in the last place (2^-8 relative).
        tol = 0 if rope is None or name == "v" else 5e-4 if dtype == mx.float32 else 2**-7
        np.testing.assert_allclose(after[slots], want[slots], rtol=0,
                                   atol=tol * np.abs(want[slots]).max(),
                                   err_msg=f"{name} pool's new rows")
    qr = np.array(rotated(rope, mq, positions).astype(mx.float32))
    expect = numpy_attention(qr, k_want, v_want, tables, ctx, scale, softcap, window)
    got = np.array(got.astype(mx.float32))
    tol = 1e-4 if dtype == mx.float32 else 1.6e-2  # as in the test above
    assert not np.isnan(got).any()
    np.testing.assert_allclose(got, expect, rtol=0, atol=tol * np.abs(expect).max())


def test_paged_decode_writing_names_new_rows_that_do_not_fit() -> None:
    """Each bad argument of a writing launch is named with what was expected, before any
    launch (so on the CPU too): the new rows' shape and dtype, the slots, the packed form."""
    pool = mx.zeros((32, 2, 64))
    tables, ctx = mx.zeros((1, 2), dtype=mx.int32), mx.ones((1,), dtype=mx.int32)
    q, rows, slots = mx.zeros((1, 4, 64)), mx.zeros((1, 2, 64)), mx.zeros((1,), dtype=mx.int32)

    def write(q, k, v, slots=slots, packed=False):  # type: ignore[no-untyped-def]
        return kernels.paged_decode_writing(q, k, v, slots, pool, pool, tables, ctx,
                                            block_size=BS, scale=1.0, packed=packed)

    with pytest.raises(ValueError, match=r"k_new \(1, 1, 64\): expected \(1, 2, 64\)"):
        write(q, rows[:, :1], rows)
    with pytest.raises(ValueError, match=r"new rows mlx.core.float32/mlx.core.float16: expected "
                                         r"the pool's mlx.core.float32"):
        write(q, rows, rows.astype(mx.float16))
    with pytest.raises(ValueError, match=r"new_slots \(2,\): expected \(1,\)"):
        write(q, rows, rows, slots=mx.zeros((2,), dtype=mx.int32))
    with pytest.raises(ValueError, match=r"k_new, v_new: expected the new rows"):
        write(q, None, rows)
    with pytest.raises(ValueError, match=r"packed: .* k_new, v_new: expected None"):
        write(mx.zeros((1, 8, 64)), rows, None, packed=True)
    with pytest.raises(ValueError, match=r"packed q \(1, 4, 64\): expected \[B, Hq \+ 4, D\]"):
        write(q, None, None, packed=True)


def test_split_count_fills_the_gpu_only_for_small_batches_and_long_contexts() -> None:
    # one request, Llama-3 heads (8 CTAs alone). Metal: a short context stays whole (no merge
    # kernel); a long one spreads over SPREAD_CTAS CTAs, spans of at least MIN_SPAN tokens
    metal = functools.partial(kernels.split_count, backend="metal")
    assert metal(1, 8, 384) == 1
    assert metal(1, 8, kernels.SPLIT_ABOVE) == 1
    assert metal(1, 8, 4096) == min(kernels.SPREAD_CTAS // 8, 4096 // kernels.MIN_SPAN)
    assert metal(1, 8, 10**6) == kernels.SPREAD_CTAS // 8
    assert metal(1, 8, kernels.SPLIT_ABOVE + 1) == (kernels.SPLIT_ABOVE + 1) // kernels.MIN_SPAN
    assert metal(64, 8, 4096) == 1  # 512 CTAs already
    # CUDA merges in the kernel: spans of MERGED_MIN_SPAN tokens past MERGED_SPLIT_ABOVE
    cuda = kernels.split_count
    assert cuda(1, 8, kernels.MERGED_MIN_SPAN) == cuda(1, 8, kernels.MERGED_SPLIT_ABOVE) == 1
    assert cuda(1, 8, 257) == 2 and cuda(1, 8, 384) == 3 and cuda(1, 8, 512) == 4
    assert cuda(1, 8, 10**6) == kernels.SPREAD_CTAS // 8
    assert cuda(16, 8, 4096) == 1 and cuda(64, 8, 4096) == 1


def test_launch_shape_gives_small_grids_more_warps_and_full_batches_four() -> None:
    shape = {"head_dim": 128, "rep": 4, "dtype": mx.bfloat16}
    # one request at 128-512 tokens in one span: on Metal warps enough for a chunk each, up
    # to the 8 that its threadgroup memory holds for these heads; on CUDA 8 up to 256 tokens,
    # else 16, and past 256 tokens spans of 128 in CTAs of 16
    metal = functools.partial(kernels.launch_shape, backend="metal")
    for ctx, warps in [(128, 4), (256, 8), (384, 8), (512, 8)]:
        assert metal(1, 8, ctx, **shape) == (warps, 1)
    for ctx, warps in [(128, 8), (256, 8), (384, 16), (512, 16)]:
        assert kernels.launch_shape(1, 8, ctx, **shape, splits=1) == (warps, 1)
    assert kernels.launch_shape(1, 8, 128, **shape) == (8, 1)
    assert kernels.launch_shape(1, 8, 256, **shape) == (8, 1)
    assert kernels.launch_shape(1, 8, 384, **shape) == (16, 3)
    assert kernels.launch_shape(1, 8, 512, **shape) == (16, 4)
    # long contexts: spans first, then warps for the span
    warps, splits = kernels.launch_shape(1, 8, 4096, **shape)
    assert splits > 1 and 4096 / splits <= warps * 32
    # a full batch keeps 4 warps and one span
    assert kernels.launch_shape(64, 8, 4096, **shape) == (4, 1)
    assert kernels.launch_shape(256, 8, 300, **shape) == (4, 1)
    # shared memory: 8 query heads per KV head fit 16 warps' s_acc in no backend's limit
    assert kernels.launch_shape(1, 8, 512, 128, 8, mx.bfloat16, splits=1) == (8, 1)
    assert kernels.launch_shape(1, 8, 512, 128, 4, mx.bfloat16, "metal") == (8, 1)
    for B, ctx in [(1, 128), (1, 512), (4, 1000), (16, 300), (1, 9000)]:
        for D, rep in [(64, 4), (80, 1), (96, 8), (128, 8), (256, 2)]:
            for backend in ("cuda", "metal"):
                warps, _ = kernels.launch_shape(B, 8, ctx, D, rep, mx.bfloat16, backend)
                assert kernels.supports(D, rep, mx.bfloat16, warps, backend)


# (head_dim, query heads per KV head) of the supported families: Llama 3.2 1B; Phi-2;
# Phi-3 mini; Llama 2; Gemma 2 27B; Llama 3.2 3B; Llama 3 8B, Mistral, Phi-3 medium;
# Llama 3 70B; Gemma 2 2B and 9B.
HEAD_SHAPES = [(64, 4), (80, 1), (96, 1), (128, 1), (128, 2), (128, 3), (128, 4), (128, 8),
               (256, 2)]


def test_sixteen_warp_variants_fit_the_register_file(tmp_path: Path) -> None:
    """A CTA of 16 warps cannot launch if the kernel uses more than 128 registers a thread
    (64K a SM), and mx.fast.cuda_kernel cannot give launch bounds to hold the compiler to it.
    Compiles every 16-warp variant that `supports` allows (writing is a runtime value), with
    nvcc for sm_90, in the signature MLX generates, and reads ptxas's count."""
    cuda = Path(kernels.__file__).parent / "cuda"
    variants = [(t, D, rep) for t in ("float", "__nv_bfloat16") for D, rep in HEAD_SHAPES
                if kernels.supports(D, rep, mx.float32, 16)]
    preamble = [*(f'#include "{cuda / h}.cuh"' for h in kernels.HEADERS),
                "struct Shape { int v[8]; __device__ int operator[](int i) const "
                "{ return v[i]; } };",
                "struct Strides { long long v[8]; "
                "__device__ long long operator[](int i) const { return v[i]; } };"]
    strided = "const __grid_constant__ Strides"
    source: list[str] = []  # one kernel each
    for i, (t, D, rep) in enumerate(variants):
        source.append("\n".join([
            f"__global__ void k{i}(const {t}* q, const __grid_constant__ Shape q_shape, "
            f"{strided} q_strides, const {t}* k_pool, "
            f"const __grid_constant__ Shape k_pool_shape, const {t}* v_pool, const int* tables, "
            f"const __grid_constant__ Shape tables_shape, {strided} tables_strides, "
            f"const int* ctx_lens, {strided} ctx_lens_strides, "
            f"const float* fparams, const int* iparams, const float* rope_freqs, "
            f"const __grid_constant__ Shape rope_freqs_shape, const unsigned* counters, "
            f"const int* after, const {t}* k_new, "
            f"{strided} k_new_strides, const {t}* v_new, {strided} v_new_strides, "
            f"const int* new_slots, {strided} new_slots_strides, {t}* out, float* part, "
            "int* done) {",
            f"  using T = {t}; constexpr int D = {D}; constexpr int REP = {rep};",
            "  constexpr int BS = 16; constexpr int WARPS = 16; constexpr bool PREFETCH = true;",
            f'#include "{cuda / "paged_decode.cu"}"',
            "}"]))
    used = emulation.nvcc_registers("\n".join(preamble), source, tmp_path, arch="sm_90")
    assert len(used) == len(variants)
    over = {variants[i]: n for i, n in used.items() if n > 128}
    assert not over, f"16-warp variants over 128 registers a thread: {over}"


def test_decode_attention_benchmark_attributes_kernels_to_launch_shapes() -> None:
    """benchmarks/decode_attention.py reads one CUPTI trace per batch and context: decode
    kernels by grid and block, each merge added to the decode before it, other kernels
    ignored."""
    bench = benchmark_module("decode_attention")

    def kernel(ts: float, dur: float, name: str, ctas: int = 0, warps: int = 0) -> dict:
        return {"ts": ts, "dur": dur, "name": f"mlx::core::cu::custom_kernel_{name}",
                "args": {"grid": [ctas, 1, 1], "block": [warps * 32, 1, 1]}}

    decode, merge = "vx_paged_decode_bfloat16_128_4_16_4_t", "vx_paged_decode_merge_bfloat16_128"
    events = [kernel(50, 9.0, "reduce_sum"),
              kernel(30, 3.0, decode, 16, 8), kernel(33, 1.0, merge, 16, 8),  # 8 warps, S = 2
              kernel(10, 5.0, decode, 8, 4), kernel(20, 7.0, decode, 8, 4),  # 4 warps, S = 1
              kernel(40, 4.0, decode, 16, 8), kernel(44, 2.0, merge, 16, 8)]
    got = bench.per_layer_us(events, 1, [(4, 1), (8, 2), (16, 1)])
    assert got[(4, 1)] == 6.0 and got[(8, 2)] == 5.0 and np.isnan(got[(16, 1)])
