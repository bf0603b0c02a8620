// The residual add and the RMS norm after it: the Metal twin of cuda/add_rms_norm.cu (same
// names, words a thread and rounding; see there for why). One threadgroup per row; VEC
// elements a word (16 bytes), read as vectors. NEVER COMPILED OR RUN: no Apple machine here.
constexpr int VEC = 16 / sizeof(T);
typedef vec<T, VEC> word_t;
const uint H = x_shape[1], words = H / VEC;
const ulong row = threadgroup_position_in_grid.x;
const uint tid = thread_position_in_threadgroup.x;
const uint threads = threads_per_threadgroup.x;
const uint lane = thread_index_in_simdgroup, warp = simdgroup_index_in_threadgroup;
const uint warps = (threads + 31) / 32;
const device word_t* xw = (const device word_t*)(x + row * H);
const device word_t* dw = (const device word_t*)(delta + row * H);
float r[PER][VEC];
float ss = 0.f;
for (int k = 0; k < PER; ++k) {
  const uint j = tid + k * threads;
  if (j < words) {
    const word_t a = xw[j], b = dw[j];
    word_t out;
    for (int e = 0; e < VEC; ++e) {
      out[e] = static_cast<T>(static_cast<float>(a[e]) + static_cast<float>(b[e]));
      r[k][e] = static_cast<float>(out[e]);
      ss += r[k][e] * r[k][e];
    }
    ((device word_t*)(residual + row * H))[j] = out;
  }
}
threadgroup float part[32];
ss = simd_sum(ss);
if (lane == 0) part[warp] = ss;
threadgroup_barrier(mem_flags::mem_threadgroup);
if (warp == 0) {
  ss = simd_sum(lane < warps ? part[lane] : 0.f);
  if (lane == 0) part[0] = ss;
}
threadgroup_barrier(mem_flags::mem_threadgroup);
const float inv = metal::rsqrt(part[0] / H + eps[0]);
for (int k = 0; k < PER; ++k) {
  const uint j = tid + k * threads;
  if (j < words) {
    const word_t wv = ((const device word_t*)w)[j];
    word_t out;
    for (int e = 0; e < VEC; ++e) {
      const T scaled = static_cast<T>(r[k][e] * inv);
      out[e] = static_cast<T>(static_cast<float>(wv[e]) * static_cast<float>(scaled));
    }
    ((device word_t*)(normed + row * H))[j] = out;
  }
}
