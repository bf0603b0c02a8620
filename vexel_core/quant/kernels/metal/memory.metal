// Memory helpers of the GGUF kernels: the Metal twin of cuda/memory.cuh.
// NEVER COMPILED OR RUN by Apple's Metal compiler or on a GPU: no Apple machine exists where
// this project is developed. Emulated on the CPU as C++ (tests/emulation.py, metal_program).

namespace vx {

// Activations: four consecutive values as floats (element offsets are multiples of 4).
inline float4 load4(const device float* p) { return *reinterpret_cast<const device float4*>(p); }
inline float4 load4(const device half* p) { return float4(*reinterpret_cast<const device half4*>(p)); }
inline float4 load4(const device bfloat16_t* p) {
  return float4(float(p[0]), float(p[1]), float(p[2]), float(p[3]));
}

inline void store4(device float* p, float a, float b, float c, float d) {
  *reinterpret_cast<device float4*>(p) = float4(a, b, c, d);
}
inline void store4(device half* p, float a, float b, float c, float d) {
  *reinterpret_cast<device half4*>(p) = half4(float4(a, b, c, d));
}
inline void store4(device bfloat16_t* p, float a, float b, float c, float d) {
  p[0] = bfloat16_t(a);
  p[1] = bfloat16_t(b);
  p[2] = bfloat16_t(c);
  p[3] = bfloat16_t(d);
}

inline void store1(device float* p, float v) { *p = v; }
inline void store1(device half* p, float v) { *p = half(v); }
inline void store1(device bfloat16_t* p, float v) { *p = bfloat16_t(v); }

// One simdgroup copies the bytes [src, src + len) into dst. Metal has no asynchronous copy
// like CUDA's cp.async, and a buffer bound at an offset need not be 16-byte aligned, so the
// copy moves 2-byte words: every GGUF row and block starts at an even byte. Returns where src
// starts inside dst (always 0 here; CUDA's version stages whole 16-byte words).
inline int stage_bytes(threadgroup uint8_t* dst, const device uint8_t* src, int len, uint lane) {
  threadgroup ushort* to = reinterpret_cast<threadgroup ushort*>(dst);
  const device ushort* from = reinterpret_cast<const device ushort*>(src);
  for (int j = int(lane); j < len / 2; j += 32) to[j] = from[j];
  return 0;
}

}  // namespace vx
