// Rotary position embedding of one row (a query's or key's head) at one position, element
// by element, as RoPE in vexel_core/model/layers.py does it for a whole array: the paged
// decode kernel rotates q and the new keys as it reads them (paged_decode_kernel.cuh).
// Included after paged_decode.cuh on the GPU, after attention_on_cpu.h in
// tests/kernel_emulation/run_attention.cpp.

namespace vxa {

// dims: features rotated (0: none); interleaved: adjacent pairs (else the two halves);
// position: the token's position times RoPE's scale; inv_freq[dims / 2]: 1 / wavelength.
struct Rope {
  int dims;
  bool interleaved;
  float position;
  float attn_factor;
  const float* inv_freq;
};

// The element that element d of a row turns with (d itself past the rotated dims).
__device__ __forceinline__ int rope_partner(const Rope& r, int d) {
  if (d >= r.dims) return d;
  return r.interleaved ? d ^ 1 : (d < r.dims / 2 ? d + r.dims / 2 : d - r.dims / 2);
}

// Element d of a row rotated, given it (x) and its partner's value (y); x as it is past dims.
__device__ __forceinline__ float rope_rotate(const Rope& r, int d, float x, float y) {
  if (d >= r.dims) return x;
  const bool second = r.interleaved ? (d & 1) : d >= r.dims / 2;
  float sine, cosine;
  sincosf(r.position * r.inv_freq[r.interleaved ? d / 2 : d % (r.dims / 2)], &sine, &cosine);
  return (second ? y * sine + x * cosine : x * cosine - y * sine) * r.attn_factor;
}

}  // namespace vxa
