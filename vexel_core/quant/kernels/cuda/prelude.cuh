// CUDA prelude of the GGUF kernels: what the backend-neutral sources (common/decode.h,
// common/formats.h) need from CUDA. Concatenated first into the `header` of
// mx.fast.cuda_kernel, after MLX's own (which provides the fixed-width integer types:
// NVRTC cannot open <stdint.h>).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#define VX_FN __device__ __forceinline__
#define VX_SMEM   // staged bytes: shared memory through generic pointers
#define VX_LOCAL  // per-thread arrays: registers
#define VX_CONST static constexpr  // compile-time members of the format structs
// 16-byte aligned words of shared memory sized at launch (mx.fast.cuda_kernel's
// shared_memory): past the 48 KiB a CTA may declare statically. (The CPU emulation defines
// its own before including this file.)
#ifndef VX_DYNAMIC_SHARED
#define VX_DYNAMIC_SHARED(name) extern __shared__ __align__(16) uint32_t name[]
#endif

namespace vx {

VX_FN float as_float(uint32_t bits) { return __uint_as_float(bits); }
VX_FN float half_to_float(uint32_t bits) {
  return __half2float(__ushort_as_half(static_cast<unsigned short>(bits)));
}
VX_FN float fmadd(float a, float b, float c) { return fmaf(a, b, c); }
VX_FN float2 pair(float a, float b) { return make_float2(a, b); }

// Bytes 0..3 of w as signed 8-bit integers (Q8_0), exactly. XOR 0x80 turns two's complement
// into offset binary; PRMT places each byte under the exponent of 2^23 (no int-to-float unit).
VX_FN void sbytes4(uint32_t w, float* out) {
  const uint32_t u = w ^ 0x80808080u;
  out[0] = __uint_as_float(__byte_perm(u, 0x4B000000u, 0x7540)) - 8388736.0f;
  out[1] = __uint_as_float(__byte_perm(u, 0x4B000000u, 0x7541)) - 8388736.0f;
  out[2] = __uint_as_float(__byte_perm(u, 0x4B000000u, 0x7542)) - 8388736.0f;
  out[3] = __uint_as_float(__byte_perm(u, 0x4B000000u, 0x7543)) - 8388736.0f;
}

}  // namespace vx
