// Cache write, in place: this step's keys and values k/v [T, Hkv, D] (any strides) into rows
// slots[t] of the pools [slots, Hkv, D], one thread per element of k and then of v.
//
// The pools are inputs, written through their pointers: MLX has no in-place custom kernels,
// and the functional alternative (a scatter returning a new pool) copies the whole pool of a
// layer whenever the step before still runs on the GPU (kvcache/pool.py says why that is
// safe here). `done` is the write's token: every reader of the pools takes it as an input,
// which is what orders the reader after this kernel in MLX's CUDA graph. `after` (the
// previous write's token) orders writes to the same pools one after another.
const int n_tok = k_shape[0];
const int n_kv = k_shape[1];
const int D = k_shape[2];
const size_t n = (size_t)n_tok * n_kv * D;
const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
if (i < 2 * n) {
  const bool is_v = i >= n;
  const size_t j = is_v ? i - n : i;
  const int d = j % D;
  const int h = j / D % n_kv;
  const int t = j / D / n_kv;
  const size_t dst = ((size_t)slots[t] * n_kv + h) * D + d;
  if (is_v) {
    vxw::writable(v_pool)[dst] = v[t * v_strides[0] + h * v_strides[1] + d * v_strides[2]];
  } else {
    vxw::writable(k_pool)[dst] = k[t * k_strides[0] + h * k_strides[1] + d * k_strides[2]];
  }
}
if (i == 0) done[0] = after[0];
