// The residual add and the RMS norm after it, in one launch: for each row of x and delta
// [rows, H], residual = T(x + delta) (the new residual stream) and normed = its RMS norm times
// w, rounded as MLX's rms_norm rounds: T(w * T(r * rsqrt(mean(r^2) + eps))). One CTA a row;
// thread t holds elements t, t + blockDim.x, ... (PER of them at most) in registers, so all
// its loads are issued at once and nothing is read back.
//
// Why: a decode step of one request is mostly MLX's per-operation cost (session 9), and every
// pre-norm block adds a residual and normalises the sum twice per layer; as separate
// operations that is two launches each time.
const int H = x_shape[1];
const size_t row = blockIdx.x;
const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
float r[PER];
#pragma unroll
for (int k = 0; k < PER; ++k) {
  const int i = threadIdx.x + k * blockDim.x;
  r[k] = i < H ? static_cast<float>(x[row * H + i]) + static_cast<float>(delta[row * H + i])
               : 0.f;
}
float ss = 0.f;
#pragma unroll
for (int k = 0; k < PER; ++k) {
  const int i = threadIdx.x + k * blockDim.x;
  if (i < H) {
    const T v = static_cast<T>(r[k]);
    residual[row * H + i] = v;
    r[k] = static_cast<float>(v);
    ss += r[k] * r[k];
  }
}
__shared__ float part[32];
ss = vxn::warp_sum(ss);
if (lane == 0) part[warp] = ss;
__syncthreads();
if (warp == 0) {
  ss = vxn::warp_sum(lane < warps ? part[lane] : 0.f);
  if (lane == 0) part[0] = ss;
}
__syncthreads();
const float inv = rsqrtf(part[0] / H + eps[0]);
#pragma unroll
for (int k = 0; k < PER; ++k) {
  const int i = threadIdx.x + k * blockDim.x;
  if (i < H) {
    const T scaled = static_cast<T>(r[k] * inv);
    normed[row * H + i] = static_cast<T>(static_cast<float>(w[i]) * static_cast<float>(scaled));
  }
}
