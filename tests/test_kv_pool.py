"""The KV pool's writes, reads and block copies, against a numpy model of the pool.

``in_place`` True is the GPU's cache-write kernel (vexel_core/kvcache/kernels), False the
scatter every device can run; the kernel's CUDA and Metal sources also run on the CPU under
the emulations of tests/kernel_emulation (Metal's as the wrapper hands it to
``mx.fast.metal_kernel``, tests/emulation.py). Values are copied, never computed, so the
comparisons are exact.
"""

from __future__ import annotations

from pathlib import Path

import mlx.core as mx
import numpy as np
import pytest

from tests import emulation
from vexel_core.gpu import kernel_backend
from vexel_core.kvcache import kernels
from vexel_core.kvcache.pool import KVPool
from vexel_core.model.architecture import KVSpec

BS = 4
LAYERS, HKV, D = 2, 3, 8
WAYS = [False, pytest.param(True, marks=pytest.mark.gpu, id="in_place")]


def make_pool(dtype: mx.Dtype, in_place: bool, blocks: int = 6) -> KVPool:
    return KVPool(KVSpec(LAYERS, HKV, D, 1024, dtype), blocks, BS, in_place=in_place)


def as_np(a: mx.array) -> np.ndarray:
    return np.array(a.astype(mx.float32))


@pytest.mark.parametrize("in_place", WAYS)
def test_writes_through_a_compiled_replica_land_in_the_pool(in_place, rng) -> None:  # type: ignore[no-untyped-def]
    # A compiled decode step (DecoderLM) writes through `replica` of its inputs and the pool
    # `adopt`s its outputs: a scatter's new arrays, or in place the writes' tokens. Two calls
    # of one trace, the second overwriting a slot of the first: the pool holds both.
    pool = make_pool(mx.float32, in_place)
    model = np.zeros((2, LAYERS, pool.num_blocks * BS, HKV, D), np.float32)

    def step(slots: mx.array, k: mx.array, v: mx.array, *state: mx.array) -> list[mx.array]:
        replica = pool.replica(state)
        for layer in range(LAYERS):
            replica.write(layer, slots, k + layer, v - layer)
        return replica.state()

    compiled = mx.compile(step)
    for slots in ([0, 5, 6], [7, 1, 6]):
        k, v = (mx.array(rng.standard_normal((3, HKV, D)), dtype=mx.float32) for _ in range(2))
        pool.adopt(compiled(mx.array(slots, dtype=mx.int32), k, v, *pool.state()))
        for layer in range(LAYERS):
            model[0, layer, slots], model[1, layer, slots] = as_np(k) + layer, as_np(v) - layer
    mx.eval(pool.all_written())
    for layer in range(LAYERS):
        np.testing.assert_array_equal(as_np(pool.k[layer]), model[0, layer])
        np.testing.assert_array_equal(as_np(pool.v[layer]), model[1, layer])


@pytest.mark.parametrize("in_place", WAYS)
@pytest.mark.parametrize("dtype", [mx.float32, mx.bfloat16, mx.float16])
def test_writes_land_in_their_slots_and_reads_see_them(in_place, dtype, rng) -> None:  # type: ignore[no-untyped-def]
    pool = make_pool(dtype, in_place)
    model = np.zeros((2, LAYERS, pool.num_blocks * BS, HKV, D), np.float32)
    # two rounds, the second overwriting some of the first's slots; k and v as slices of a
    # wider array (a fused projection's output is not contiguous)
    for slots in ([0, 5, 6, 7, 23], [6, 1, 2, 12, 13, 14, 15]):
        for layer in range(LAYERS):
            fused = mx.array(rng.standard_normal((len(slots), 3, HKV, D)), dtype=dtype)
            k, v = fused[:, 0], fused[:, 2]
            pool.write(layer, mx.array(slots, dtype=mx.int32), k, v)
            model[0, layer, slots], model[1, layer, slots] = as_np(k), as_np(v)
        tables = mx.array([[1, 3], [5, 0]], dtype=mx.int32)
        for layer in range(LAYERS):
            keys, values = pool.gather(layer, tables)
            idx = (np.array(tables)[:, :, None] * BS + np.arange(BS)).reshape(2, -1)
            np.testing.assert_array_equal(as_np(keys), model[0, layer][idx])
            np.testing.assert_array_equal(as_np(values), model[1, layer][idx])
    mx.eval(pool.all_written())
    for layer in range(LAYERS):  # the whole pools, read directly
        np.testing.assert_array_equal(as_np(pool.k[layer]), model[0, layer])
        np.testing.assert_array_equal(as_np(pool.v[layer]), model[1, layer])


@pytest.mark.parametrize("in_place", WAYS)
def test_copy_on_write_duplicates_blocks_in_every_layer(in_place, rng) -> None:  # type: ignore[no-untyped-def]
    pool = make_pool(mx.float32, in_place)
    for layer in range(LAYERS):
        data = mx.array(rng.standard_normal((pool.num_blocks * BS, HKV, D)), dtype=mx.float32)
        pool.write(layer, mx.arange(pool.num_blocks * BS, dtype=mx.int32), data, -data)
    mx.eval(pool.all_written())
    before = [(as_np(pool.k[i]), as_np(pool.v[i])) for i in range(LAYERS)]
    pool.copy_blocks([(1, 4), (2, 0)])
    mx.eval(pool.all_written())
    for layer, (k, v) in enumerate(before):
        want_k, want_v = k.copy(), v.copy()
        for src, dst in ((1, 4), (2, 0)):
            want_k[dst * BS:(dst + 1) * BS] = k[src * BS:(src + 1) * BS]
            want_v[dst * BS:(dst + 1) * BS] = v[src * BS:(src + 1) * BS]
        np.testing.assert_array_equal(as_np(pool.k[layer]), want_k)
        np.testing.assert_array_equal(as_np(pool.v[layer]), want_v)


@pytest.mark.gpu
def test_in_place_writes_keep_the_pool_arrays() -> None:
    """The point of writing in place: the pool is never replaced (so never copied)."""
    pool = make_pool(mx.bfloat16, True)
    k0, v0 = pool.k[0], pool.v[0]
    x = mx.ones((2, HKV, D), dtype=mx.bfloat16)
    pool.write(0, mx.array([3, 9], dtype=mx.int32), x, x)
    mx.eval(pool.all_written())
    assert pool.k[0] is k0 and pool.v[0] is v0
    assert as_np(k0)[[3, 9]].min() == 1


def test_in_place_writes_need_a_gpu_kernel() -> None:
    if kernel_backend() is not None:
        pytest.skip("this device has the kernel")
    with pytest.raises(ValueError, match="GPU kernel"):
        make_pool(mx.float32, True)


def metal_cache_write(binary: Path | None, k: np.ndarray, v: np.ndarray, slots: np.ndarray,
                      pools: np.ndarray, recorder: emulation.MetalRecorder | None = None
                      ) -> tuple[np.ndarray, list[int]]:
    """`kernels.cache_write` with backend "metal" on rows ``[T, row]`` (their first HKV x D
    elements, as views) into *pools* ``[2, slots, HKV, D]``, its kernel run by the emulation
    in *binary* (or given to *recorder*): the pools after the write, and the token."""
    T, row = k.shape
    mk, mv = (mx.array(a) for a in (k, v))
    views = [(m[:, : HKV * D].reshape(T, HKV, D),
              emulation.MetalInput(a.view(np.uint8).reshape(-1), 0, (T, HKV, D), (row, D, 1)))
             for m, a in ((mk, k), (mv, v))]
    k_pool, v_pool = mx.array(pools[0]), mx.array(pools[1])
    recorder = recorder or emulation.MetalRecorder(binary, views)
    with emulation.metal_kernels_on_cpu(recorder, kernels._kernel):
        done = kernels.cache_write(views[0][0], views[1][0], mx.array(slots), k_pool, v_pool,
                                   mx.array([0], dtype=mx.int32), backend="metal")
    assert binary is None or recorder.views_bound == 2  # k and v read through their strides
    return np.stack([np.array(k_pool), np.array(v_pool)]), done.tolist()


@pytest.mark.parametrize("path", ["emulated_cuda", "emulated_metal"])
def test_the_cache_write_emulated_on_the_cpu(path: str, tmp_path: Path, rng) -> None:  # type: ignore[no-untyped-def]
    """cuda/cache_write.cu's and metal/cache_write.metal's indexing: strided rows in,
    scattered slots out, nothing else touched, the token passed on."""
    T, slots_total, row = 37, 80, 3 * HKV * D + 5  # rows wider than a token's features
    k = rng.standard_normal((T, row)).astype(np.float32)
    v = rng.standard_normal((T, row)).astype(np.float32)
    slots = rng.permutation(slots_total)[:T].astype(np.int32)
    pools = rng.standard_normal((2, slots_total, HKV, D)).astype(np.float32)
    if path == "emulated_metal":
        recorder = emulation.MetalRecorder()  # the kernel as the wrapper makes it
        metal_cache_write(None, k, v, slots, pools, recorder)
        got, token = metal_cache_write(emulation.build_metal(tmp_path, recorder.kernels), k, v,
                                       slots, pools)
        errors = emulation.metal_address_space_errors(tmp_path, recorder.kernels)
        assert errors == {"threadgroup": "", "device": ""}, "\n".join(errors.values())
    else:
        cuda = Path(kernels.__file__).parent / "cuda"
        binary = emulation.build(tmp_path, "run_cache_write.cpp", [cuda])
        data = k.tobytes() + v.tobytes() + slots.tobytes() + pools.tobytes()
        out = np.frombuffer(emulation.run(binary, [T, HKV, D, slots_total, row], data),
                            np.uint8)
        got = out[: pools.nbytes].view(np.float32).reshape(pools.shape)
        token = out[pools.nbytes:].view(np.int32).tolist()
    want = pools.copy()
    want[0, slots] = k[:, : HKV * D].reshape(T, HKV, D)
    want[1, slots] = v[:, : HKV * D].reshape(T, HKV, D)
    np.testing.assert_array_equal(got, want)
    assert token[0] == 0  # the token: element 0 (`vexel_core.gpu.TOKEN_SHAPE`)
