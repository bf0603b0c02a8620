// Helpers of paged_decode.cu, given to mx.fast.cuda_kernel as its header (after MLX's own).
// tests/kernel_emulation/attention_on_cpu.h defines the same functions for the CPU.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace vxa {

// Lanes that hold one row of D elements, EPL each: a power of two, so that the lanes of a
// token are an aligned group of the warp and xor-shuffles stay inside it.
constexpr int lanes_per_token(int d, int epl) {
  int n = 1;
  while (n * epl < d) n *= 2;
  return n;
}

// Elements [0, N) of p as floats, zeros from `valid` on. VEC: p is 16-byte aligned and, when
// valid >= N, read as whole 16-byte words.
template <class T, int N, bool VEC>
__device__ __forceinline__ void load(const T* p, int valid, float* out) {
  constexpr int PER = 16 / sizeof(T);
  if (VEC && N % PER == 0 && valid >= N) {
#pragma unroll
    for (int w = 0; w < N / PER; ++w) {
      const uint4 raw = reinterpret_cast<const uint4*>(p)[w];
      const T* e = reinterpret_cast<const T*>(&raw);
#pragma unroll
      for (int i = 0; i < PER; ++i) out[w * PER + i] = static_cast<float>(e[i]);
    }
  } else {
#pragma unroll
    for (int i = 0; i < N; ++i) out[i] = i < valid ? static_cast<float>(p[i]) : 0.f;
  }
}

template <class T>
__device__ __forceinline__ T from_float(float x) { return static_cast<T>(x); }

}  // namespace vxa
