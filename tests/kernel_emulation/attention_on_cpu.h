// vexel_core/attention/kernels/cuda/paged_decode.cuh for the CPU (see cuda_fp16.h beside
// this file): the same helpers, with plain element loads.
#pragma once
#include <cmath>

#include "cuda_fp16.h"
#include "memory_on_cpu.h"

inline float __expf(float x) { return std::exp(x); }
inline float fmaxf(float a, float b) { return std::fmax(a, b); }
inline float tanhf(float x) { return std::tanh(x); }

namespace vxa {

constexpr int lanes_per_token(int d, int epl) {
  int n = 1;
  while (n * epl < d) n *= 2;
  return n;
}

inline float to_float(float x) { return x; }
inline float to_float(__nv_bfloat16 x) { return vx::bf16_to_float(x.bits); }

template <class T, int N, bool VEC>
void load(const T* p, int valid, float* out) {
  for (int i = 0; i < N; ++i) out[i] = i < valid ? to_float(p[i]) : 0.f;
}

template <class T> T from_float(float x);
template <> inline float from_float<float>(float x) { return x; }
template <> inline __nv_bfloat16 from_float<__nv_bfloat16>(float x) { return {vx::float_to_bf16(x)}; }

}  // namespace vxa
