// Just enough of CUDA to compile the real cuda/prelude.cuh, common/*.h and cuda/kernels.cuh
// for the CPU (tests/test_quant_kernels.py): every CUDA thread is a std::thread,
// __syncwarp/__syncthreads are real barriers, shuffles go through memory, __shared__ arrays
// are static (one CTA runs at a time). Found as <cuda_fp16.h> by the prelude's include.
#pragma once
#include <algorithm>
#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstring>

#define __device__
#define __forceinline__ inline
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))
// dynamic shared memory (cuda/prelude.cuh): a static array as large as any test launch asks
#define VX_DYNAMIC_SHARED(name) alignas(16) static uint32_t name[64 * 1024]

struct float2 { float x, y; };
struct float4 { float x, y, z, w; };
struct uint2 { uint32_t x, y; };
struct uint4 { uint32_t x, y, z, w; };
inline float2 make_float2(float a, float b) { return {a, b}; }
inline uint4 make_uint4(uint32_t a, uint32_t b, uint32_t c, uint32_t d) { return {a, b, c, d}; }
struct __nv_bfloat16 { uint16_t bits; };
struct __half { uint16_t bits; };
inline __half __ushort_as_half(unsigned short b) { return {b}; }
inline float __half2float(__half h) {
  _Float16 f;
  std::memcpy(&f, &h.bits, 2);
  return float(f);
}
inline float __uint_as_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline uint32_t __float_as_uint(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float __fdiv_rn(float a, float b) { return a / b; }  // IEEE division on the CPU
inline int __dp4a(int a, int b, int c) {  // four signed 8-bit products, summed into c
  for (int i = 0; i < 4; ++i) c += int(int8_t(a >> (8 * i))) * int(int8_t(b >> (8 * i)));
  return c;
}
inline uint32_t __vsub4(uint32_t a, uint32_t b) {  // bytewise, modulo 256
  uint32_t r = 0;
  for (int i = 0; i < 4; ++i) r |= ((((a >> (8 * i)) & 0xFF) - ((b >> (8 * i)) & 0xFF)) & 0xFF) << (8 * i);
  return r;
}
inline uint32_t __funnelshift_r(uint32_t lo, uint32_t hi, uint32_t shift) {  // hi:lo >> (shift & 31)
  return uint32_t(((uint64_t(hi) << 32) | lo) >> (shift & 31));
}
inline uint32_t __byte_perm(uint32_t x, uint32_t y, uint32_t selector) {
  const uint64_t bytes = (uint64_t(y) << 32) | x;
  uint32_t r = 0;
  for (int i = 0; i < 4; ++i) r |= uint32_t((bytes >> (8 * ((selector >> (4 * i)) & 7))) & 0xFF) << (8 * i);
  return r;
}
using std::fmaf;
using std::fmaxf;
inline float fabsf(float v) { return std::fabs(v); }
using std::max;
using std::min;

struct dim3 { unsigned x = 0, y = 0, z = 0; };
inline thread_local dim3 threadIdx, blockIdx;
inline dim3 gridDim;  // set by launch()
inline thread_local std::barrier<>* warp_barrier;
inline thread_local std::barrier<>* cta_barrier;
inline thread_local float* warp_slots;  // 32 floats shared by the lanes of a warp

// gemv_int8's AddNorm and the feed-forward kernel's slices: CTAs run one after another here,
// so the last to count is the last CTA, and CTA 0 takes every slice
inline unsigned atomicAdd(unsigned* p, unsigned v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
inline unsigned atomicExch(unsigned* p, unsigned v) {
  return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST);
}
inline int atomicMin(int* p, int v) {
  int old = __atomic_load_n(p, __ATOMIC_SEQ_CST);
  while (v < old && !__atomic_compare_exchange_n(p, &old, v, false, __ATOMIC_SEQ_CST,
                                                 __ATOMIC_SEQ_CST)) {
  }
  return old;
}
inline unsigned __ldcg(const unsigned* p) { return __atomic_load_n(p, __ATOMIC_SEQ_CST); }
inline uint4 __ldcg(const uint4* p) { return *p; }
inline float rsqrtf(float v) { return 1.0f / std::sqrt(v); }

inline void __syncwarp() { warp_barrier->arrive_and_wait(); }
inline void __syncthreads() { cta_barrier->arrive_and_wait(); }
// Every lane's v, in lane order (the tensor-core product's emulation gathers its operands)
inline void warp_gather(uint32_t v, uint32_t (&all)[32]) {
  const int lane = threadIdx.x & 31;
  std::memcpy(&warp_slots[lane], &v, 4);
  __syncwarp();
  std::memcpy(all, warp_slots, sizeof all);
  __syncwarp();
}
inline uint2 __ldg(const uint2* p) { return *p; }
inline uint4 __ldg(const uint4* p) { return *p; }
inline float __shfl_xor_sync(unsigned, float v, int lane_mask) {
  const int lane = threadIdx.x & 31;
  warp_slots[lane] = v;
  __syncwarp();
  const float r = warp_slots[lane ^ lane_mask];
  __syncwarp();
  return r;
}

