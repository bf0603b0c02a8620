// vexel_core/attention/kernels/cuda/paged_decode.cuh for the CPU (see cuda_fp16.h beside
// this file): the same helpers; words are copied bytes, loads are element by element.
#pragma once
#include <cmath>
#include <cstring>

#include "cuda_fp16.h"
#include "memory_on_cpu.h"

inline float __expf(float x) { return std::exp(x); }
inline float tanhf(float x) { return std::tanh(x); }
// The split merge's count and fences (merge.cuh): CTAs run one after another here
inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline float __ldcg(const float* p) { return *p; }
using std::min;
inline thread_local dim3 blockDim;  // set by the launch's body (launch_on_cpu.h sets the rest)

namespace vxa {

inline float to_float(float x) { return x; }
inline float to_float(__nv_bfloat16 x) { return vx::bf16_to_float(x.bits); }

template <class T> T from_float(float x);
template <> inline float from_float<float>(float x) { return x; }
template <> inline __nv_bfloat16 from_float<__nv_bfloat16>(float x) { return {vx::float_to_bf16(x)}; }

template <class T>
uint4 word(const T* p, int w) {
  uint4 out;
  std::memcpy(&out, reinterpret_cast<const char*>(p) + 16 * w, 16);
  return out;
}

template <class T, int N>
void load(const T* p, int valid, float* out) {
  for (int i = 0; i < N; ++i) out[i] = i < valid ? to_float(p[i]) : 0.f;
}

template <class U>
U* writable(const U* p) { return const_cast<U*>(p); }

inline void prefetch_l2(const void*, int) {}  // a hint: nothing to do on the CPU

inline float warp_max(float x) {
  for (int off = 16; off > 0; off >>= 1) x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, off));
  return x;
}

inline float warp_sum(float x) {
  for (int off = 16; off > 0; off >>= 1) x += __shfl_xor_sync(0xffffffffu, x, off);
  return x;
}

}  // namespace vxa
