// The residual add and the RMS norm after it: the Metal twin of cuda/add_rms_norm.cu (same
// names, 16-byte words a thread and rounding; see there for why). One threadgroup per row; a
// word's VEC elements are read one by one (Metal's vectors stop at four elements, a word of
// 2-byte types holds eight). NEVER COMPILED OR RUN by Apple's Metal compiler or on a GPU: no
// Apple machine exists where this project is developed. Emulated on the CPU as C++, wrapped
// and launched as ../__init__.py hands it to mx.fast.metal_kernel (tests/emulation.py,
// MetalRecorder; tests/test_norm_kernels.py, float32 against float64).
constexpr int VEC = 16 / sizeof(T);
const uint H = x_shape[1], words = H / VEC;
const ulong row = threadgroup_position_in_grid.x;
const uint tid = thread_position_in_threadgroup.x;
const uint threads = threads_per_threadgroup.x;
const uint lane = thread_index_in_simdgroup, warp = simdgroup_index_in_threadgroup;
const uint warps = (threads + 31) / 32;
float r[PER][VEC];
float ss = 0.f;
for (int k = 0; k < PER; ++k) {
  const uint j = tid + k * threads;
  if (j < words) {
    for (int e = 0; e < VEC; ++e) {
      const ulong i = row * H + j * VEC + e;
      const T v = static_cast<T>(static_cast<float>(x[i]) + static_cast<float>(delta[i]));
      residual[i] = v;
      r[k][e] = static_cast<float>(v);
      ss += r[k][e] * r[k][e];
    }
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
    for (int e = 0; e < VEC; ++e) {
      const T scaled = static_cast<T>(r[k][e] * inv);
      normed[row * H + j * VEC + e] =
          static_cast<T>(static_cast<float>(w[j * VEC + e]) * static_cast<float>(scaled));
    }
  }
}
