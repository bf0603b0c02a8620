// Cache write, in place: the Metal twin of cuda/cache_write.cu (same names and indexing; see
// there for why the pools are written through their input pointers). NEVER COMPILED OR RUN by
// Apple's Metal compiler or on a GPU: no Apple machine exists where this project is developed.
// Emulated on the CPU as C++, wrapped and launched as ../__init__.py hands it to
// mx.fast.metal_kernel (tests/emulation.py, MetalRecorder; tests/test_kv_pool.py).
const uint n_tok = k_shape[0];
const uint n_kv = k_shape[1];
const uint D = k_shape[2];
const ulong n = ulong(n_tok) * n_kv * D;
const ulong i = ulong(thread_position_in_grid.x);
if (i < 2 * n) {
  const bool is_v = i >= n;
  const ulong j = is_v ? i - n : i;
  const uint d = j % D;
  const uint h = j / D % n_kv;
  const uint t = j / D / n_kv;
  const ulong dst = (ulong(slots[t]) * n_kv + h) * D + d;
  if (is_v) {
    ((device T*)v_pool)[dst] = v[t * v_strides[0] + h * v_strides[1] + d * v_strides[2]];
  } else {
    ((device T*)k_pool)[dst] = k[t * k_strides[0] + h * k_strides[1] + d * k_strides[2]];
  }
}
if (i == 0) done[0] = after[0];
