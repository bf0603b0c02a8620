// Metal prelude of the GGUF kernels: what the backend-neutral sources (common/decode.h,
// common/formats.h) need from Metal. The twin of cuda/prelude.cuh.
// NEVER COMPILED OR RUN by Apple's Metal compiler or on a GPU: no Apple machine exists where
// this project is developed. Emulated on the CPU as C++ (tests/emulation.py, metal_program).

#define VX_FN inline
#define VX_SMEM threadgroup  // staged bytes
#define VX_LOCAL thread      // per-thread arrays
#define VX_CONST static constant constexpr const  // compile-time members of the format structs

namespace vx {

inline float as_float(uint32_t bits) { return metal::as_type<float>(bits); }
inline float half_to_float(uint32_t bits) { return float(metal::as_type<half>(ushort(bits))); }
inline float fmadd(float a, float b, float c) { return metal::fma(a, b, c); }
inline float2 pair(float a, float b) { return float2(a, b); }

// Bytes 0..3 of w as signed 8-bit integers (Q8_0); Apple GPUs convert integers at full rate.
inline void sbytes4(uint32_t w, thread float* out) {
  const char4 c = metal::as_type<char4>(w);
  out[0] = float(c.x);
  out[1] = float(c.y);
  out[2] = float(c.z);
  out[3] = float(c.w);
}

}  // namespace vx
