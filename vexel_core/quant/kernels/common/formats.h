// The ten GGUF block formats (and one repacked layout of Q4_0), each described the same way so that one matrix-vector kernel and
// one dequantization kernel serve them all (cuda/kernels.cuh, metal/kernels.metal). Shared by
// both backends through the macros of their preludes (see decode.h).
//
// A block of BE elements and BB bytes splits into P "pieces" of 8 elements: two runs of 4
// consecutive elements. The layout of each format (ggml's block_q4_0 ... block_q6_K) decides
// which elements a piece holds:
//   piece(b, p, q)    the 8 quantized values of piece p as exact floats: q[0..3] for run 0,
//                     q[4..7] for run 1;
//   elem_of(p, run)   the index inside the block of the first element of a run;
//   group_of(p, run)  the scale group (of G per block) that run belongs to;
//   group(b, g)       (scale, min) of group g, so that element = scale * q + min.
// `b` points at the block's first byte in on-chip memory (2-byte aligned).
// The element order and arithmetic follow ggml's dequantize_row_* functions exactly.

namespace vx {

// ---- 32-element blocks: piece p is bytes 4p..4p+3 of the 16 nibble bytes; the low nibbles
// ---- are elements 4p..4p+3, the high nibbles elements 16+4p..16+4p+3.
struct Legacy32 {
  VX_CONST int BE = 32, P = 4, G = 1;
  static VX_FN int elem_of(int p, int run) { return 4 * p + 16 * run; }
  static VX_FN int group_of(int, int) { return 0; }
};

struct Q4_0 : Legacy32 {  // d (f16), qs[16]: x = d * (q - 8)
  VX_CONST int BB = 18;
  VX_CONST bool HAS_MIN = false;
  static VX_FN float2 group(VX_SMEM const uint8_t* b, int) {
    return pair(ld_f16(b), 0.0f);
  }
  static VX_FN void piece(VX_SMEM const uint8_t* b, int p, VX_LOCAL float* q) {
    nibbles8(ld_u32(b + 2 + 4 * p), 8.0f, q, q + 4);
  }
};

// Q4_0 repacked into 1,024-element super-blocks (library's `packed`, vexel_core/quant/kernels/
// packed.py): 32 consecutive Q4_0 blocks, their quants first (block k's qs[16] at bytes
// 16k..16k+15), then their scales (block k's d at byte 512 + 2k). The file's bytes, regrouped
// so that a 16-byte aligned row (576 bytes a super-block) keeps every block's quants in one
// aligned 16-byte word. Piece p is bytes 4p..4p+3: bytes 4(p%4).. of block p/4's quants, so
// elements and groups are Q4_0's, block by block, and the decoding is Q4_0's bit for bit.
struct Q4_0x1024 {
  VX_CONST int BE = 1024, BB = 576, P = 128, G = 32;
  VX_CONST bool HAS_MIN = false;
  static VX_FN int elem_of(int p, int run) { return 32 * (p >> 2) + 4 * (p & 3) + 16 * run; }
  static VX_FN int group_of(int p, int) { return p >> 2; }
  static VX_FN float2 group(VX_SMEM const uint8_t* b, int g) {
    return pair(ld_f16(b + 512 + 2 * g), 0.0f);
  }
  static VX_FN void piece(VX_SMEM const uint8_t* b, int p, VX_LOCAL float* q) {
    nibbles8(ld_u32(b + 4 * p), 8.0f, q, q + 4);
  }
};

struct Q4_1 : Legacy32 {  // d, m (f16), qs[16]: x = d * q + m
  VX_CONST int BB = 20;
  VX_CONST bool HAS_MIN = true;
  static VX_FN float2 group(VX_SMEM const uint8_t* b, int) {
    return pair(ld_f16(b), ld_f16(b + 2));
  }
  static VX_FN void piece(VX_SMEM const uint8_t* b, int p, VX_LOCAL float* q) {
    nibbles8(ld_u32(b + 4 + 4 * p), 0.0f, q, q + 4);
  }
};

// Five-bit values: nibble plus bit j (element j) or bit j+16 (element j+16) of qh.
VX_FN void five_bit_piece(uint32_t qs, uint32_t qh, int p, float off, VX_LOCAL float* q) {
  const uint32_t lo = (qs & 0x0F0F0F0Fu) | (spread4(qh >> (4 * p)) << 4);
  const uint32_t hi = ((qs >> 4) & 0x0F0F0F0Fu) | (spread4(qh >> (4 * p + 16)) << 4);
  bytes4<5>(lo, off, q);
  bytes4<5>(hi, off, q + 4);
}

struct Q5_0 : Legacy32 {  // d (f16), qh[4], qs[16]: x = d * (q - 16)
  VX_CONST int BB = 22;
  VX_CONST bool HAS_MIN = false;
  static VX_FN float2 group(VX_SMEM const uint8_t* b, int) {
    return pair(ld_f16(b), 0.0f);
  }
  static VX_FN void piece(VX_SMEM const uint8_t* b, int p, VX_LOCAL float* q) {
    five_bit_piece(ld_u32(b + 6 + 4 * p), ld_u32(b + 2), p, 16.0f, q);
  }
};

struct Q5_1 : Legacy32 {  // d, m (f16), qh[4], qs[16]: x = d * q + m
  VX_CONST int BB = 24;
  VX_CONST bool HAS_MIN = true;
  static VX_FN float2 group(VX_SMEM const uint8_t* b, int) {
    return pair(ld_f16(b), ld_f16(b + 2));
  }
  static VX_FN void piece(VX_SMEM const uint8_t* b, int p, VX_LOCAL float* q) {
    five_bit_piece(ld_u32(b + 8 + 4 * p), ld_u32(b + 4), p, 0.0f, q);
  }
};

struct Q8_0 {  // d (f16), qs[32] (int8): x = d * q; piece p is elements 8p..8p+7
  VX_CONST int BE = 32, BB = 34, P = 4, G = 1;
  VX_CONST bool HAS_MIN = false;
  static VX_FN int elem_of(int p, int run) { return 8 * p + 4 * run; }
  static VX_FN int group_of(int, int) { return 0; }
  static VX_FN float2 group(VX_SMEM const uint8_t* b, int) {
    return pair(ld_f16(b), 0.0f);
  }
  static VX_FN void piece(VX_SMEM const uint8_t* b, int p, VX_LOCAL float* q) {
    sbytes4(ld_u32(b + 2 + 8 * p), q);
    sbytes4(ld_u32(b + 6 + 8 * p), q + 4);
  }
};

// ---- 256-element super-blocks: 32 pieces per block.

// Q2_K and Q3_K: element 128n + 32j + 16h + l (l < 16) is the 2-bit field j of qs byte
// 32n + 16h + l, in scale group 8n + 2j + h. Piece p = (n, h, jp, l/4) holds j = 2jp (run 0)
// and j = 2jp + 1 (run 1) of four consecutive bytes.
struct TwoBit256 {
  VX_CONST int BE = 256, P = 32, G = 16;
  static VX_FN int n_of(int p) { return p >> 4; }
  static VX_FN int h_of(int p) { return (p >> 3) & 1; }
  static VX_FN int j_of(int p, int run) { return 2 * ((p >> 2) & 1) + run; }
  static VX_FN int l_of(int p) { return (p & 3) * 4; }
  static VX_FN int elem_of(int p, int run) {
    return 128 * n_of(p) + 32 * j_of(p, run) + 16 * h_of(p) + l_of(p);
  }
  static VX_FN int group_of(int p, int run) {
    return 8 * n_of(p) + 2 * j_of(p, run) + h_of(p);
  }
  static VX_FN int qs_of(int p) { return 32 * n_of(p) + 16 * h_of(p) + l_of(p); }
};

struct Q2_K : TwoBit256 {  // scales[16], qs[64], d, dmin: x = d*(sc&15)*q - dmin*(sc>>4)
  VX_CONST int BB = 84;
  VX_CONST bool HAS_MIN = true;
  static VX_FN float2 group(VX_SMEM const uint8_t* b, int g) {
    const uint32_t sc = ld_u8(b + g);
    return pair(ld_f16(b + 80) * float(sc & 15u), -ld_f16(b + 82) * float(sc >> 4));
  }
  static VX_FN void piece(VX_SMEM const uint8_t* b, int p, VX_LOCAL float* q) {
    const uint32_t w = ld_u32(b + 16 + qs_of(p));
    bytes4<2>((w >> (2 * j_of(p, 0))) & 0x03030303u, 0.0f, q);
    bytes4<2>((w >> (2 * j_of(p, 1))) & 0x03030303u, 0.0f, q + 4);
  }
};

struct Q3_K : TwoBit256 {  // hmask[32], qs[64], scales[12] (6-bit), d: x = d*(sc-32)*(q + 4h - 4)
  VX_CONST int BB = 110;
  VX_CONST bool HAS_MIN = false;
  static VX_FN float2 group(VX_SMEM const uint8_t* b, int g) {
    const uint32_t lo = (ld_u8(b + 96 + (g & 7)) >> (4 * (g >> 3))) & 15u;
    const uint32_t hi = (ld_u8(b + 104 + (g & 3)) >> (2 * (g >> 2))) & 3u;
    return pair(ld_f16(b + 108) * float(int(lo | (hi << 4)) - 32), 0.0f);
  }
  static VX_FN void piece(VX_SMEM const uint8_t* b, int p, VX_LOCAL float* q) {
    const uint32_t w = ld_u32(b + 32 + qs_of(p));
    const uint32_t hm = ld_u32(b + 16 * h_of(p) + l_of(p));  // bit 4n + j of hmask[16h + l]
#pragma unroll
    for (int run = 0; run < 2; ++run) {
      const int j = j_of(p, run);
      const uint32_t v = ((w >> (2 * j)) & 0x03030303u) |
                         (((hm >> (4 * n_of(p) + j)) & 0x01010101u) << 2);
      bytes4<3>(v, 4.0f, q + 4 * run);
    }
  }
};

// Q4_K and Q5_K: element 64g + 32r + l is nibble r of qs byte 32g + l, in scale group 2g + r;
// the 6-bit scales and mins of the 8 groups are packed into 12 bytes.
struct Nibble256 {
  VX_CONST int BE = 256, P = 32, G = 8;
  VX_CONST bool HAS_MIN = true;
  static VX_FN int elem_of(int p, int run) {
    return 64 * (p >> 3) + 32 * run + (p & 7) * 4;
  }
  static VX_FN int group_of(int p, int run) { return 2 * (p >> 3) + run; }
  // ggml's get_scale_min_k4 on the scales at b + 4, times d and dmin at b and b + 2.
  static VX_FN float2 group(VX_SMEM const uint8_t* b, int j) {
    VX_SMEM const uint8_t* s = b + 4;  // Metal: still threadgroup memory (no generic space)
    uint32_t sc, m;
    if (j < 4) {
      sc = ld_u8(s + j) & 63u;
      m = ld_u8(s + j + 4) & 63u;
    } else {
      sc = (ld_u8(s + j + 4) & 15u) | ((ld_u8(s + j - 4) >> 6) << 4);
      m = (ld_u8(s + j + 4) >> 4) | ((ld_u8(s + j) >> 6) << 4);
    }
    return pair(ld_f16(b) * float(sc), -ld_f16(b + 2) * float(m));
  }
};

struct Q4_K : Nibble256 {  // d, dmin, scales[12], qs[128]
  VX_CONST int BB = 144;
  static VX_FN void piece(VX_SMEM const uint8_t* b, int p, VX_LOCAL float* q) {
    nibbles8(ld_u32(b + 16 + 32 * (p >> 3) + (p & 7) * 4), 0.0f, q, q + 4);
  }
};

struct Q5_K : Nibble256 {  // d, dmin, scales[12], qh[32], qs[128]; bit 2g + r of qh[l]
  VX_CONST int BB = 176;
  static VX_FN void piece(VX_SMEM const uint8_t* b, int p, VX_LOCAL float* q) {
    const int g = p >> 3, l = (p & 7) * 4;
    const uint32_t w = ld_u32(b + 48 + 32 * g + l);
    const uint32_t h = ld_u32(b + 16 + l);
    const uint32_t lo = (w & 0x0F0F0F0Fu) | (((h >> (2 * g)) & 0x01010101u) << 4);
    const uint32_t hi = ((w >> 4) & 0x0F0F0F0Fu) | (((h >> (2 * g + 1)) & 0x01010101u) << 4);
    bytes4<5>(lo, 0.0f, q);
    bytes4<5>(hi, 0.0f, q + 4);
  }
};

// Q6_K: ql[128], qh[64], scales[16] (int8), d. Element 128n + 32t + l is nibble t>>1 of
// ql[64n + 32(t&1) + l] plus bits 2t..2t+1 of qh[32n + l] as bits 4..5, minus 32, in scale
// group 8n + 2t + l/16. Piece p = (n, tp, l/4) holds t = 2tp (run 0) and t = 2tp + 1 (run 1).
struct Q6_K {
  VX_CONST int BE = 256, BB = 210, P = 32, G = 16;
  VX_CONST bool HAS_MIN = false;
  static VX_FN int elem_of(int p, int run) {
    return 128 * (p >> 4) + 32 * (2 * ((p >> 3) & 1) + run) + (p & 7) * 4;
  }
  static VX_FN int group_of(int p, int run) {
    return 8 * (p >> 4) + 2 * (2 * ((p >> 3) & 1) + run) + (((p & 7) * 4) >> 4);
  }
  static VX_FN float2 group(VX_SMEM const uint8_t* b, int g) {
    return pair(ld_f16(b + 208) * float(int(ld_u8(b + 192 + g) ^ 128u) - 128), 0.0f);
  }
  static VX_FN void piece(VX_SMEM const uint8_t* b, int p, VX_LOCAL float* q) {
    const int n = p >> 4, tp = (p >> 3) & 1, l = (p & 7) * 4;
    const uint32_t a = ld_u32(b + 64 * n + l);
    const uint32_t c = ld_u32(b + 64 * n + 32 + l);
    const uint32_t h = ld_u32(b + 128 + 32 * n + l);
    const uint32_t v0 = ((a >> (4 * tp)) & 0x0F0F0F0Fu) | (((h >> (4 * tp)) & 0x03030303u) << 4);
    const uint32_t v1 = ((c >> (4 * tp)) & 0x0F0F0F0Fu) | (((h >> (4 * tp + 2)) & 0x03030303u) << 4);
    bytes4<6>(v0, 32.0f, q);
    bytes4<6>(v1, 32.0f, q + 4);
  }
};

// GGML type numbers (gguf.GGMLQuantizationType) to formats: kernels take the number as a
// template argument. A layout of ours that no GGUF file holds takes a number above GGML's
// (which end below 100), so that it can never be mistaken for a file's type: 1002 is Q4_0
// (type 2) repacked, Q4_0x1024.
template <int GGML_TYPE> struct FormatOf;
template <> struct FormatOf<2> { using type = Q4_0; };
template <> struct FormatOf<3> { using type = Q4_1; };
template <> struct FormatOf<6> { using type = Q5_0; };
template <> struct FormatOf<7> { using type = Q5_1; };
template <> struct FormatOf<8> { using type = Q8_0; };
template <> struct FormatOf<10> { using type = Q2_K; };
template <> struct FormatOf<11> { using type = Q3_K; };
template <> struct FormatOf<12> { using type = Q4_K; };
template <> struct FormatOf<13> { using type = Q5_K; };
template <> struct FormatOf<14> { using type = Q6_K; };
template <> struct FormatOf<1002> { using type = Q4_0x1024; };

}  // namespace vx
