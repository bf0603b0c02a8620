// Decoding GGUF bytes: byte access in on-chip memory and exact small integers as floats.
// Shared by the CUDA and Metal kernels: the backend's prelude defines VX_FN (function
// qualifiers), VX_SMEM (the address space of staged bytes), VX_LOCAL (of per-thread arrays),
// VX_CONST (compile-time struct members) and the helpers as_float, half_to_float, fmadd, pair
// and sbytes4.

namespace vx {

// ---------------------------------------------------------------------------------------------
// Bytes in on-chip memory. Every field of every GGUF block lies at an even offset and every
// block size is even, so 2-byte loads are always aligned; 4-byte words are built from two.
// ---------------------------------------------------------------------------------------------
VX_FN uint32_t ld_u8(VX_SMEM const uint8_t* p) { return *p; }
VX_FN uint32_t ld_u16(VX_SMEM const uint8_t* p) {
  return *reinterpret_cast<VX_SMEM const uint16_t*>(p);
}
VX_FN uint32_t ld_u32(VX_SMEM const uint8_t* p) {
  return ld_u16(p) | (ld_u16(p + 2) << 16);
}
VX_FN float ld_f16(VX_SMEM const uint8_t* p) { return half_to_float(ld_u16(p)); }

// ---------------------------------------------------------------------------------------------
// Exact small integers as floats without the slow int-to-float unit: OR-ing a field into the
// mantissa of 2^23 gives the float 2^23 + v * 2^POS, and one FMA scales it and subtracts
// 2^23 + off. Every step is exact, so the result is v - off exactly.
// ---------------------------------------------------------------------------------------------
template <int POS, int BITS>
VX_FN float field(uint32_t w, float off) {
  static_assert(POS + BITS <= 23, "the field must lie inside the float mantissa");
  constexpr uint32_t MASK = ((1u << BITS) - 1u) << POS;
  constexpr float SCALE = 1.0f / float(1u << POS);
  const float f = as_float((w & MASK) | 0x4B000000u);
  return fmadd(f, SCALE, -(8388608.0f * SCALE + off));
}

// Bytes 0..3 of w each hold an unsigned value below 2^BITS (BITS <= 7): out[i] = byte_i - off.
template <int BITS>
VX_FN void bytes4(uint32_t w, float off, VX_LOCAL float* out) {
  out[0] = field<0, BITS>(w, off);
  out[1] = field<8, BITS>(w, off);
  out[2] = field<16, BITS>(w, off);
  out[3] = field<0, BITS>(w >> 24, off);
}

// The low nibbles of bytes 0..3 minus off into lo, the high nibbles minus off into hi.
// Nibbles above bit 19 would reach the exponent, so they are read from w >> 12.
VX_FN void nibbles8(uint32_t w, float off, VX_LOCAL float* lo, VX_LOCAL float* hi) {
  const uint32_t v = w >> 12;
  lo[0] = field<0, 4>(w, off);
  lo[1] = field<8, 4>(w, off);
  lo[2] = field<16, 4>(w, off);
  lo[3] = field<12, 4>(v, off);
  hi[0] = field<4, 4>(w, off);
  hi[1] = field<12, 4>(w, off);
  hi[2] = field<8, 4>(v, off);
  hi[3] = field<16, 4>(v, off);
}

// Bits 0..3 of v moved to bit 0 of bytes 0..3 (the multiply's partial products never overlap).
VX_FN uint32_t spread4(uint32_t v) {
  return ((v & 0xFu) * 0x00204081u) & 0x01010101u;
}

}  // namespace vx
