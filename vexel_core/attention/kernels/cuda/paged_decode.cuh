// Helpers of paged_decode.cu, given to mx.fast.cuda_kernel as its header (after MLX's own).
// tests/kernel_emulation/attention_on_cpu.h defines the same functions for the CPU.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace vxa {

template <class T>
__device__ __forceinline__ float to_float(T x) { return static_cast<float>(x); }

template <class T>
__device__ __forceinline__ T from_float(float x) { return static_cast<T>(x); }

// The w-th 16-byte word from p (16-byte aligned).
template <class T>
__device__ __forceinline__ uint4 word(const T* p, int w) {
  return reinterpret_cast<const uint4*>(p)[w];
}

// Elements [0, N) of p as floats, read as N * sizeof(T) / sizeof(Word) whole words.
template <class Word, class T, int N>
__device__ __forceinline__ void load_words(const T* p, float* out) {
  constexpr int PER = sizeof(Word) / sizeof(T);
#pragma unroll
  for (int w = 0; w < N / PER; ++w) {
    const Word raw = reinterpret_cast<const Word*>(p)[w];
    const T* e = reinterpret_cast<const T*>(&raw);
#pragma unroll
    for (int i = 0; i < PER; ++i) out[w * PER + i] = to_float(e[i]);
  }
}

// Elements [0, N) of p as floats, zeros from `valid` on. Whole 8- or 16-byte words when N
// elements make whole words and all are valid (p is then aligned to the word: the caller's
// rows are 16-byte aligned and N elements start at a multiple of N).
template <class T, int N>
__device__ __forceinline__ void load(const T* p, int valid, float* out) {
  constexpr int BYTES = N * sizeof(T);
  if constexpr (BYTES % 8 == 0) {
    if (valid >= N) {
      if constexpr (BYTES % 16 == 0) {
        load_words<uint4, T, N>(p, out);
      } else {
        load_words<uint2, T, N>(p, out);
      }
      return;
    }
  }
#pragma unroll
  for (int i = 0; i < N; ++i) out[i] = i < valid ? to_float(p[i]) : 0.f;
}

// A hint: the 128-byte lines of [p, p + bytes) fetched into L2 (no registers, no wait).
__device__ __forceinline__ void prefetch_l2(const void* p, int bytes) {
  const char* c = static_cast<const char*>(p);
  for (int b = 0; b < bytes; b += 128) asm volatile("prefetch.global.L2 [%0];" ::"l"(c + b));
  asm volatile("prefetch.global.L2 [%0];" ::"l"(c + bytes - 1));  // an unaligned row's last line
}

// A pool handed to the kernel as an input (MLX declares inputs const), written in place
// (writing; kvcache/kernels/cuda/cache_write.cuh has the same for the cache write).
template <class U>
__device__ __forceinline__ U* writable(const U* p) { return const_cast<U*>(p); }

__device__ __forceinline__ float warp_max(float x) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, off));
  return x;
}

__device__ __forceinline__ float warp_sum(float x) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) x += __shfl_xor_sync(0xffffffffu, x, off);
  return x;
}

}  // namespace vxa
