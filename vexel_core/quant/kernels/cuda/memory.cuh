// Memory helpers of the GGUF kernels: activation loads, output stores and asynchronous staging
// of weight bytes into shared memory.

namespace vx {

// ---------------------------------------------------------------------------------------------
// Activations: four consecutive values as floats, read through the read-only cache.
// ---------------------------------------------------------------------------------------------
__device__ __forceinline__ float4 load4(const float* p) {
  return __ldg(reinterpret_cast<const float4*>(p));
}
__device__ __forceinline__ float4 load4(const __half* p) {
  const uint2 v = __ldg(reinterpret_cast<const uint2*>(p));
  const float2 a = __half22float2(*reinterpret_cast<const __half2*>(&v.x));
  const float2 b = __half22float2(*reinterpret_cast<const __half2*>(&v.y));
  return make_float4(a.x, a.y, b.x, b.y);
}
__device__ __forceinline__ float4 load4(const __nv_bfloat16* p) {
  const uint2 v = __ldg(reinterpret_cast<const uint2*>(p));
  return make_float4(__uint_as_float(v.x << 16), __uint_as_float(v.x & 0xFFFF0000u),
                     __uint_as_float(v.y << 16), __uint_as_float(v.y & 0xFFFF0000u));
}

__device__ __forceinline__ void store4(float* p, float a, float b, float c, float d) {
  *reinterpret_cast<float4*>(p) = make_float4(a, b, c, d);
}
__device__ __forceinline__ void store4(__half* p, float a, float b, float c, float d) {
  __half2 v[2] = {__floats2half2_rn(a, b), __floats2half2_rn(c, d)};
  *reinterpret_cast<uint2*>(p) = *reinterpret_cast<const uint2*>(v);
}
__device__ __forceinline__ void store4(__nv_bfloat16* p, float a, float b, float c, float d) {
  __nv_bfloat162 v[2] = {__floats2bfloat162_rn(a, b), __floats2bfloat162_rn(c, d)};
  *reinterpret_cast<uint2*>(p) = *reinterpret_cast<const uint2*>(v);
}

// One value as a float: a plain load (it may be a register's address), and one through L2 alone
// (ld.global.cg), for values other CTAs of the same launch wrote (gemv_int8's AddNorm).
__device__ __forceinline__ float load1(const float* p) { return *p; }
__device__ __forceinline__ float load1(const __half* p) { return __half2float(*p); }
__device__ __forceinline__ float load1(const __nv_bfloat16* p) { return __bfloat162float(*p); }
__device__ __forceinline__ float load1_l2(const float* p) { return __ldcg(p); }
__device__ __forceinline__ float load1_l2(const __half* p) {
  return __half2float(__ushort_as_half(__ldcg(reinterpret_cast<const unsigned short*>(p))));
}
__device__ __forceinline__ float load1_l2(const __nv_bfloat16* p) {
  return __uint_as_float(uint32_t(__ldcg(reinterpret_cast<const unsigned short*>(p))) << 16);
}

// A release/acquire fence at GPU scope (PTX fence.acq_rel.gpu): what a count that publishes
// other CTAs' writes needs; __threadfence() is a sequentially consistent one (fence.sc.gpu).
__device__ __forceinline__ void fence_acq_rel() { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }

// A count or flag that other CTAs of the launch write: read at GPU scope, with acquire (what
// the count published becomes visible) or relaxed (the value alone).
__device__ __forceinline__ uint32_t load_acquire(const uint32_t* p) {
  uint32_t v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ uint32_t load_relaxed(const uint32_t* p) {
  uint32_t v;
  asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

// A hint: the 128-byte line at p fetched into L2 (no register, no wait).
__device__ __forceinline__ void prefetch_l2(const void* p) {
  asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
}

__device__ __forceinline__ void store1(float* p, float v) { *p = v; }
__device__ __forceinline__ void store1(__half* p, float v) { *p = __float2half(v); }
__device__ __forceinline__ void store1(__nv_bfloat16* p, float v) { *p = __float2bfloat16(v); }

// ---------------------------------------------------------------------------------------------
// Asynchronous global -> shared copies (sm_80+), 16 bytes each, cached in L2 only: weights are
// streamed once.
// ---------------------------------------------------------------------------------------------
__device__ __forceinline__ void cp_async16(void* smem, const void* gmem) {
  const uint32_t s = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem) : "memory");
}
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// One warp copies the bytes [src, src + len) into dst with 16-byte copies of the aligned words
// that cover them, and returns where src starts inside dst. GGUF rows need not start on a
// 16-byte boundary (a Q4_0 block is 18 bytes); the covering words never leave the pages that
// hold the row, so the few bytes read around it are harmless.
__device__ __forceinline__ int stage_bytes(uint8_t* dst, const uint8_t* src, int len, int lane) {
  const uintptr_t start = reinterpret_cast<uintptr_t>(src);
  const uintptr_t first = start & ~uintptr_t(15);
  const int off = int(start - first);
  const int words = (off + len + 15) >> 4;
  for (int j = lane; j < words; j += 32) {
    cp_async16(dst + 16 * j, reinterpret_cast<const uint8_t*>(first) + 16 * j);
  }
  return off;
}

}  // namespace vx
