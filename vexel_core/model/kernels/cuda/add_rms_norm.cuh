// The residual add + RMS norm kernel, given to mx.fast.cuda_kernel as its header (included by
// path): add_rms_norm.cu's body is one call of vxn::add_rms_norm, as MLX copies a kernel's body
// text on every launch. tests/kernel_emulation/run_add_rms_norm.cpp compiles it for the CPU.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace vxn {

__device__ __forceinline__ float warp_sum(float x) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) x += __shfl_xor_sync(0xffffffffu, x, off);
  return x;
}

// The residual add and the RMS norm after it, in one launch: for each row of x and delta
// [rows, H], residual = T(x + delta) (the new residual stream) and normed = its RMS norm times
// w, rounded as MLX's rms_norm rounds: T(w * T(r * rsqrt(mean(r^2) + eps))). One CTA a row;
// thread t holds the 16-byte words t, t + blockDim.x, ... of the row (PER of them at most,
// VEC elements each) in registers: one load of each input per word, all issued at once.
// (Scalar loads spread over sixteen per thread took 11.7 us a launch on the H200, against
// 3.1 + 1.5 us for MLX's rms_norm and addition, session 9.) H is a multiple of VEC.
//
// Why: a decode step of one request is mostly MLX's per-operation cost (session 9), and every
// pre-norm block adds a residual and normalises the sum twice per layer; as separate
// operations that is two launches each time.
template <class T, int PER, class Shape>
__device__ __forceinline__ void add_rms_norm(const T* x, const Shape& x_shape, const T* delta,
                                             const T* w, const float* eps, T* residual,
                                             T* normed) {
  constexpr int VEC = 16 / sizeof(T);
  const int H = x_shape[1], words = H / VEC;
  const size_t row = blockIdx.x;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  const uint4* xw = reinterpret_cast<const uint4*>(x + row * H);
  const uint4* dw = reinterpret_cast<const uint4*>(delta + row * H);
  uint4 a[PER], b[PER];
  #pragma unroll
  for (int k = 0; k < PER; ++k) {
    const int j = threadIdx.x + k * blockDim.x;
    if (j < words) {
      a[k] = xw[j];
      b[k] = dw[j];
    }
  }
  float r[PER][VEC];
  float ss = 0.f;
  #pragma unroll
  for (int k = 0; k < PER; ++k) {
    const int j = threadIdx.x + k * blockDim.x;
    if (j < words) {
      const T* ea = reinterpret_cast<const T*>(&a[k]);
      const T* eb = reinterpret_cast<const T*>(&b[k]);
      uint4 out;
      T* eo = reinterpret_cast<T*>(&out);
  #pragma unroll
      for (int e = 0; e < VEC; ++e) {
        eo[e] = static_cast<T>(static_cast<float>(ea[e]) + static_cast<float>(eb[e]));
        r[k][e] = static_cast<float>(eo[e]);
        ss += r[k][e] * r[k][e];
      }
      reinterpret_cast<uint4*>(residual + row * H)[j] = out;
    }
  }
  __shared__ float part[32];
  ss = warp_sum(ss);
  if (lane == 0) part[warp] = ss;
  __syncthreads();
  if (warp == 0) {
    ss = warp_sum(lane < warps ? part[lane] : 0.f);
    if (lane == 0) part[0] = ss;
  }
  __syncthreads();
  const float inv = rsqrtf(part[0] / H + eps[0]);
  #pragma unroll
  for (int k = 0; k < PER; ++k) {
    const int j = threadIdx.x + k * blockDim.x;
    if (j < words) {
      const uint4 wv = reinterpret_cast<const uint4*>(w)[j];
      const T* ew = reinterpret_cast<const T*>(&wv);
      uint4 out;
      T* eo = reinterpret_cast<T*>(&out);
  #pragma unroll
      for (int e = 0; e < VEC; ++e) {
        const T scaled = static_cast<T>(r[k][e] * inv);
        eo[e] = static_cast<T>(static_cast<float>(ew[e]) * static_cast<float>(scaled));
      }
      reinterpret_cast<uint4*>(normed + row * H)[j] = out;
    }
  }
}

}  // namespace vxn
