// cuda/memory.cuh for the CPU (see cuda_fp16.h beside this file): the same activation loads,
// output stores and staging, with asynchronous copies done at once.
#pragma once
#include <cstring>

namespace vx {
inline float bf16_to_float(uint16_t b) { return __uint_as_float(uint32_t(b) << 16); }
inline uint16_t float_to_bf16(float f) {  // round to nearest even, as __float2bfloat16
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return uint16_t((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}
inline uint16_t float_to_f16(float f) {  // round to nearest even, as __float2half
  const _Float16 h = _Float16(f);
  uint16_t b;
  std::memcpy(&b, &h, 2);
  return b;
}
inline float4 load4(const float* p) { return {p[0], p[1], p[2], p[3]}; }
inline float4 load4(const __nv_bfloat16* p) {
  return {bf16_to_float(p[0].bits), bf16_to_float(p[1].bits), bf16_to_float(p[2].bits),
          bf16_to_float(p[3].bits)};
}
inline void store4(float* p, float a, float b, float c, float d) {
  p[0] = a; p[1] = b; p[2] = c; p[3] = d;
}
inline void store4(__nv_bfloat16* p, float a, float b, float c, float d) {
  p[0].bits = float_to_bf16(a); p[1].bits = float_to_bf16(b);
  p[2].bits = float_to_bf16(c); p[3].bits = float_to_bf16(d);
}
inline void fence_acq_rel() { __atomic_thread_fence(__ATOMIC_ACQ_REL); }
inline uint32_t load_acquire(const uint32_t* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
inline uint32_t load_relaxed(const uint32_t* p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
inline void prefetch_l2(const void*) {}
inline float load1(const float* p) { return *p; }
inline float load1(const __nv_bfloat16* p) { return bf16_to_float(p->bits); }
inline float load1_l2(const float* p) { return *p; }
inline float load1_l2(const __nv_bfloat16* p) { return bf16_to_float(p->bits); }
inline void store1(float* p, float v) { *p = v; }
inline void store1(__nv_bfloat16* p, float v) { p->bits = float_to_bf16(v); }
inline void store1(__half* p, float v) { p->bits = float_to_f16(v); }
inline void cp_async16(void* smem, const void* gmem) { std::memcpy(smem, gmem, 16); }
inline void cp_async_commit() {}
template <int N> inline void cp_async_wait() {}
inline int stage_bytes(uint8_t* dst, const uint8_t* src, int len, int lane) {
  const uintptr_t start = reinterpret_cast<uintptr_t>(src);
  const uintptr_t first = start & ~uintptr_t(15);
  const int off = int(start - first);
  const int words = (off + len + 15) >> 4;
  for (int j = lane; j < words; j += 32) std::memcpy(dst + 16 * j, reinterpret_cast<const uint8_t*>(first) + 16 * j, 16);
  return off;
}
}  // namespace vx
