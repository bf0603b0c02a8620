// The residual add and the RMS norm after it: the Metal twin of cuda/add_rms_norm.cu (same
// names, registers and rounding; see there for why). One threadgroup per row. NEVER COMPILED
// OR RUN: no Apple machine here.
const uint H = x_shape[1];
const ulong row = threadgroup_position_in_grid.x;
const uint tid = thread_position_in_threadgroup.x;
const uint threads = threads_per_threadgroup.x;
const uint lane = thread_index_in_simdgroup, warp = simdgroup_index_in_threadgroup;
const uint warps = (threads + 31) / 32;
float r[PER];
for (int k = 0; k < PER; ++k) {
  const uint i = tid + k * threads;
  r[k] = i < H ? static_cast<float>(x[row * H + i]) + static_cast<float>(delta[row * H + i])
               : 0.f;
}
float ss = 0.f;
for (int k = 0; k < PER; ++k) {
  const uint i = tid + k * threads;
  if (i < H) {
    const T v = static_cast<T>(r[k]);
    residual[row * H + i] = v;
    r[k] = static_cast<float>(v);
    ss += r[k] * r[k];
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
  const uint i = tid + k * threads;
  if (i < H) {
    const T scaled = static_cast<T>(r[k] * inv);
    normed[row * H + i] = static_cast<T>(static_cast<float>(w[i]) * static_cast<float>(scaled));
  }
}
