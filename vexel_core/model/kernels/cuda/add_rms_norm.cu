// The residual add and the RMS norm after it, in one launch: for each row of x and delta
// [rows, H], residual = T(x + delta) (the new residual stream) and normed = its RMS norm times
// w, rounded as MLX's rms_norm rounds: T(w * T(r * rsqrt(mean(r^2) + eps))). One CTA a row.
//
// Why: a decode step of one request is mostly MLX's per-operation cost (session 9), and every
// pre-norm block adds a residual and normalises the sum twice per layer; as separate
// operations that is two launches each time.
const int H = x_shape[1];
const size_t row = blockIdx.x;
const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
const T* xr = x + row * H;
const T* dr = delta + row * H;
T* sr = residual + row * H;
T* nr = normed + row * H;

float ss = 0.f;
for (int i = threadIdx.x; i < H; i += blockDim.x) {
  const T v = static_cast<T>(static_cast<float>(xr[i]) + static_cast<float>(dr[i]));
  sr[i] = v;  // read back below by this same thread
  const float f = static_cast<float>(v);
  ss += f * f;
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
for (int i = threadIdx.x; i < H; i += blockDim.x) {
  const T scaled = static_cast<T>(static_cast<float>(sr[i]) * inv);
  nr[i] = static_cast<T>(static_cast<float>(w[i]) * static_cast<float>(scaled));
}
