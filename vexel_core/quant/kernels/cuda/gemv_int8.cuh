// One activation row (or a few: XROWS) rounded to 8-bit integers: the matrix-vector product of
// one request's decoding (or a few requests') for Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K and
// Q6_K, with llama.cpp's arithmetic (mmvq): four 8-bit products per __dp4a, the weights'
// integers never turned into floats.
//
// Why a second kernel: at one activation row the float kernel (kernels.cuh) spends about 4.7
// instructions per weight decoding and multiplying floats, and is issue-bound; four products
// per instruction take Q4_0 14336x4096 from 24.8 to 16.8 us on the H200 (Nsight Compute,
// notes/gpu-kernels.md, session 7). Rounding x is a pass over all of it, so the CTAs are few
// (at most Int8Tiling.ctas) and long-lived: each rounds x into shared memory once while its
// first weight copies fly, then its warps stream many weight rows through a pipeline of
// asynchronous copies. (Session 3 rounded x in each of 3,584 short CTAs and lost.)
//
// x is rounded per 32-element block, as llama.cpp's quantize_q8_1: d = amax / 127 and
// q = rint(x * (127 / amax)), both divisions IEEE, the product rounded once (fmaf with 1.5 * 2^23
// rounds half to even without the float-to-int unit). The block's sum of q is kept for the
// formats with a min (Q4_1, Q5_1, Q4_K, Q5_K: element = scale * q + min) or a constant zero
// point (Q4_0's 8, Q5_0's 16). The ~900 CTAs at 14336x4096 each repeat that rounding (~1 us of
// the product in benchmarks/q4_0_ablation.py, XSRC 4 against 0), so x may also come rounded
// once beforehand (round_x below, its own small launch; XPRE): the same values, read by every
// CTA.
//
// Warp w of the grid owns weight rows w, w + W, w + 2W, ... (W warps in all; the launch picks W
// so that every warp gets the same number of rows, or one fewer); a lane decodes PER_LANE
// 32-element sub-blocks of each staged chunk of 1024 * PER_LANE elements; the warp reduces at
// each row's end.
// Rows and the staged blocks start on even bytes (GGUF block sizes are even and MLX's buffers
// aligned), so words are read from their 4-byte floors with one byte permute each; the scales
// are formats.h's (F::group), as the float kernel decodes them. Q4_K and Q5_K in a 16-byte
// aligned matrix read whole 16-byte words instead, Q6_K a sub-block's two scales at once, and
// Q4_0 a block's d with its quants, from the same five aligned words (Int8Format): fewer
// shared-memory loads, the same floats. Q4_0 repacked (formats.h's Q4_0x1024, GGML_TYPE 1002)
// reads a block's quants with one 16-byte load and its d with one 2-byte load.
//
// Gated mode (ACT 1: SiLU, 2: GELU tanh): W holds 2F rows, gate rows 0..F-1 then up rows
// F..2F-1 (a fused gate/up projection), and y[i] = act(g_i) * u_i with g_i = W[i].x and
// u_i = W[i + F].x. Warp w owns outputs w, w + W, ... and streams row i, then row i + F,
// through the same pipeline (the same bytes and staging as the plain product of 2F rows); it
// keeps the gate's sum in a register (no shared memory beyond the plain product's, so
// Int8Tiling.shared_bytes holds for both), and at the up row's end lane 0 stores the
// product. With XREG, the gate and the up row's first chunks both read x from registers.
// One node of MLX's graph instead of four (the product, the split's two slices, MLX's fused
// act(g) * u): one request's decoding is host-bound, and MLX spends ~4.5 us of host time on a
// custom kernel, ~2.7 us on a slice (notes/engine-gpu.md, "Host time per node").

// MLX's elementwise functors (Multiply, Sigmoid, Tanh, ...), which NVRTC has under this name
// (MLX's JIT headers): the gated mode computes act(g) * u with them (glu below).
#include "mlx/backend/cuda/device/binary_ops.cuh"

namespace vx {

// N words at the even byte offset `at` of a 16-byte aligned staging slot: aligned 4-byte
// loads and one byte permute each (one word more is read than returned).
template <int N>
__device__ __forceinline__ void words_at(const uint32_t* slot, int at, uint32_t (&out)[N]) {
  const uint32_t* a = slot + (at >> 2);
  const uint32_t sel = (at & 2) ? 0x5432u : 0x3210u;
#pragma unroll
  for (int k = 0; k < N; ++k) out[k] = __byte_perm(a[k], a[k + 1], sel);
}

// dp4a of four unsigned bytes a by four signed bytes b, added to c
__device__ __forceinline__ int dp4a_us(int a, int b, int c) {
#ifdef __CUDA_ARCH__
  int d;
  asm("dp4a.u32.s32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
#else  // the CPU emulation (tests/kernel_emulation)
  for (int i = 0; i < 4; ++i) {
    c += int((uint32_t(a) >> (8 * i)) & 0xFFu) * int(int8_t(uint32_t(b) >> (8 * i)));
  }
  return c;
#endif
}

// A format's 32-element sub-block j of the block at byte `at` of a slot, as eight words of four
// signed bytes (word i: elements 4i..4i+3 of the sub-block; element = scale * byte + min with
// the (scale, min) of group). SPLIT: two scale groups of 16 elements (words 0-3, 4-7). WHOLE:
// the format's dot takes a lane's sub-block to its scale and integer sum instead (Q4_0, whose
// blocks are sub-blocks, and its packed layout). ZERO: element = scale * (byte - ZERO) + min,
// the kernel taking ZERO times x's block sum off the integer sum (exact, like Q4_0's -8).
template <int GGML_TYPE>
struct Int8Format;

// group(slot, at, j): sub-block j's (scale, min) as the float kernel decodes them (F::group).
template <int GGML_TYPE>
struct Int8Scales {
  __device__ __forceinline__ static float2 group(const uint32_t* slot, int at, int j) {
    return FormatOf<GGML_TYPE>::type::group(reinterpret_cast<const uint8_t*>(slot) + at, j);
  }
};

// Q4_0: nibbles (element j low, j + 16 high) minus 8. WHOLE: dot reads a block and sums its
// products itself (no ints or group). Its 18 bytes lie within the five aligned words from its
// 4-byte floor: d in word 0's low half (at % 4 == 0) or high half (at % 4 == 2), the quants
// from byte 2 (one byte permute a word) or in words 1-4. Five 4-byte loads a block where
// words_at and formats.h's byte-wise d took six; at % 4 alternates between neighbouring lanes
// (18-byte blocks) but not between a lane's blocks (576 bytes apart): a selector, no branch.
// The nibbles stay in place, multiplied as unsigned bytes (dp4a.u32.s32, the high ones 16
// times their value), and "minus 8" is the low sum's start, -8 times x's block sum: the same
// integer as the bytes minus 8 (__vsub4 took four instructions a word: nvdisasm, session 15).
__device__ __forceinline__ int q4_0_dot(const uint32_t (&qs)[4], uint4 xa, uint4 xb, int xs) {
  int lo = dp4a_us(int(qs[0] & 0x0F0F0F0Fu), int(xa.x), -8 * xs);
  lo = dp4a_us(int(qs[1] & 0x0F0F0F0Fu), int(xa.y), lo);
  lo = dp4a_us(int(qs[2] & 0x0F0F0F0Fu), int(xa.z), lo);
  lo = dp4a_us(int(qs[3] & 0x0F0F0F0Fu), int(xa.w), lo);
  int hi = dp4a_us(int(qs[0] & 0xF0F0F0F0u), int(xb.x), 0);
  hi = dp4a_us(int(qs[1] & 0xF0F0F0F0u), int(xb.y), hi);
  hi = dp4a_us(int(qs[2] & 0xF0F0F0F0u), int(xb.z), hi);
  hi = dp4a_us(int(qs[3] & 0xF0F0F0F0u), int(xb.w), hi);
  return lo + (hi >> 4);  // exact: hi is a multiple of 16
}

template <>
struct Int8Format<2> {
  static constexpr bool SPLIT = false, WORDS16 = false, IN_PLACE = false, WHOLE = true;
  // The lane's u-th block of a chunk (SUBS = 1: blocks lane + 32u; the chunk at byte at0 of
  // the slot) dotted with x's words xa, xb (block sum xs): the integer sum of (q - 8) x, and
  // the block's scale in d. (Its words addressed from the first block's, 32 * 18 bytes a step:
  // ptxas did not see that (at + 576u) / 4 = at / 4 + 144u, and masked each block's address.)
  __device__ __forceinline__ static int dot(const uint32_t* slot, int at0, int lane, int u,
                                            uint4 xa, uint4 xb, int xs, float& d) {
    const int at = at0 + lane * 18;
    const uint32_t* a = slot + (at >> 2) + u * (32 * 18 / 4);
    const bool high = (at & 2) != 0;
    const uint32_t sel = high ? 0x7654u : 0x5432u;
    uint32_t w[5];
#pragma unroll
    for (int k = 0; k < 5; ++k) w[k] = a[k];
    d = half_to_float(w[0] >> (high ? 16 : 0));
    uint32_t qs[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) qs[k] = __byte_perm(w[k], w[k + 1], sel);
    return q4_0_dot(qs, xa, xb, xs);
  }
};

// Q4_0 repacked (formats.h's Q4_0x1024): a block of 1,024 elements is 32 sub-blocks, so the
// lane's u-th sub-block of a chunk (SUBS = 32: sub-block lane of block u) is the file's Q4_0
// block `lane` of super-block u, its quants at bytes 16 lane.. of the super-block and its d at
// 512 + 2 lane; dotted as Int8Format<2> dots a block. WORDS16: in a 16-byte aligned matrix
// every chunk starts on a 16-byte word of its slot (super-blocks are 36 words), so ALIGNED
// reads the quants with one 16-byte load, consecutive lanes consecutive words; else (a buffer
// off alignment) with words_at.
template <>
struct Int8Format<1002> {
  static constexpr bool SPLIT = false, WORDS16 = true, IN_PLACE = false, WHOLE = true;
  template <bool ALIGNED>
  __device__ __forceinline__ static int dot(const uint32_t* slot, int at0, int lane, int u,
                                            uint4 xa, uint4 xb, int xs, float& d) {
    const uint8_t* bytes = reinterpret_cast<const uint8_t*>(slot);
    uint32_t qs[4];
    if constexpr (ALIGNED) {  // at0 is 0: the offsets are the lane's and u's alone
      const uint4 v = reinterpret_cast<const uint4*>(bytes + 576 * u)[lane];
      qs[0] = v.x, qs[1] = v.y, qs[2] = v.z, qs[3] = v.w;
      d = ld_f16(bytes + 576 * u + 512 + 2 * lane);
    } else {
      words_at(slot, at0 + 576 * u + 16 * lane, qs);
      d = ld_f16(bytes + at0 + 576 * u + 512 + 2 * lane);
    }
    return q4_0_dot(qs, xa, xb, xs);
  }
};

template <>
struct Int8Format<8> : Int8Scales<8> {  // Q8_0: 32 signed bytes
  static constexpr bool SPLIT = false, WORDS16 = false, IN_PLACE = false, WHOLE = false;
  static constexpr int ZERO = 0;
  __device__ __forceinline__ static void ints(const uint32_t* slot, int at, int, int (&q)[8]) {
    uint32_t w[8];
    words_at(slot, at + 2, w);
#pragma unroll
    for (int i = 0; i < 8; ++i) q[i] = int(w[i]);
  }
};

// Q4_1, Q5_0 and Q5_1 (formats.h's Legacy32): a block is one 32-element sub-block, a head of
// HEAD bytes (d, and m where the format has a min), then, five-bit formats (FIVE), qh's four
// bytes (bit l: element l's fifth bit), then the nibbles qs[16] (element l: the low nibble of
// qs[l], element 16 + l: the high one). The bytes are q (0..31) as they are, dotted by signed
// dp4a: element = d * (q - ZERO) + m, Q5_0's ZERO of 16 taken off by the kernel as 16 times x's
// block sum (Q4_0, with the same layout but for qh, would have ZERO 8; its dot does that
// itself). Blocks of 20, 22 and 24 bytes are not whole 16-byte words (Q5_0's not even 4-byte
// ones): words_at reads them from 4-byte words, and group is formats.h's (2-byte loads).
template <int GGML_TYPE, int HEAD, bool FIVE, int Z>
struct Int8Legacy : Int8Scales<GGML_TYPE> {
  static constexpr bool SPLIT = false, WORDS16 = false, IN_PLACE = false, WHOLE = false;
  static constexpr int ZERO = Z;
  __device__ __forceinline__ static void ints(const uint32_t* slot, int at, int, int (&q)[8]) {
    uint32_t w[FIVE ? 5 : 4];  // qh (FIVE), then qs
    words_at(slot, at + HEAD, w);
    const uint32_t qh = FIVE ? w[0] : 0u;
    const uint32_t* qs = w + (FIVE ? 1 : 0);
    // word i: elements 4i.. (low nibbles), word i + 4: elements 16 + 4i.. (high nibbles), each
    // byte's fifth bit from its element's bit of qh (spread4: four bits to bit 0 of four bytes)
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      q[i] = int((qs[i] & 0x0F0F0F0Fu) | (spread4(qh >> (4 * i)) << 4));
      q[i + 4] = int(((qs[i] >> 4) & 0x0F0F0F0Fu) | (spread4(qh >> (4 * i + 16)) << 4));
    }
  }
};

template <>
struct Int8Format<3> : Int8Legacy<3, 4, false, 0> {};  // Q4_1: d, m, qs; w = d q + m
template <>
struct Int8Format<6> : Int8Legacy<6, 2, true, 16> {};  // Q5_0: d, qh, qs; w = d (q - 16)
template <>
struct Int8Format<7> : Int8Legacy<7, 4, true, 0> {};  // Q5_1: d, m, qh, qs; w = d q + m

// Q4_K and Q5_K (formats.h's Nibble256, F): blocks of whole 16-byte words (144 = 9 * 16,
// 176 = 11 * 16) that start with the same 16-byte head (d, dmin and the 12 bytes of scales).
// In a 16-byte aligned matrix (every one MLX allocates; the test of an offset buffer takes the
// other path) the head and the quants are read with 16-byte shared-memory loads: three a
// Q4_K sub-block, where words_at and formats.h's byte-wise scales take ~17 loads, the scales'
// two branches divergent across the lanes of a block (`at` is 16-byte aligned in every lane
// or in none).
// WORDS16: ints and group take ALIGNED, whether the chunk starts 16-byte aligned in its slot
// (then so does every block of it), which the kernel tests once a chunk instead of twice a
// sub-block (the branches serialised each sub-block's shared-memory loads: nvdisasm, session
// 14).
template <class F>
struct Int8Nibble256 {
  // 32 bytes at byte `run` of the slot as eight words: two 16-byte loads (ALIGNED: `run` is
  // a multiple of 16), else words_at
  template <bool ALIGNED>
  __device__ __forceinline__ static void words32(const uint32_t* slot, int run,
                                                 uint32_t (&w)[8]) {
    if constexpr (ALIGNED) {
      const uint4* p =
          reinterpret_cast<const uint4*>(reinterpret_cast<const uint8_t*>(slot) + run);
      const uint4 a = p[0], b = p[1];
      w[0] = a.x, w[1] = a.y, w[2] = a.z, w[3] = a.w, w[4] = b.x, w[5] = b.y, w[6] = b.z;
      w[7] = b.w;
    } else {
      words_at(slot, run, w);
    }
  }
  // formats.h's Nibble256::group (ggml's get_scale_min_k4) on the head in registers: the same
  // products, so the same floats
  template <bool ALIGNED>
  __device__ __forceinline__ static float2 group(const uint32_t* slot, int at, int j) {
    if constexpr (!ALIGNED) {
      return F::group(reinterpret_cast<const uint8_t*>(slot) + at, j);
    } else {
      const uint4 head =
          *reinterpret_cast<const uint4*>(reinterpret_cast<const uint8_t*>(slot) + at);
      // j < 4: scales[j] & 63, scales[j + 4] & 63; j >= 4: the low (scale) or high (min) nibble
      // of scales[j + 4] with the top two bits of scales[j - 4] (scale) or scales[j] (min) above
      // it. One formula for both, with shifts and masks that depend on the lane only.
      const int s = 8 * (j & 3);
      const bool upper = j >= 4;
      const int s1 = upper ? s + 2 : s;
      const uint32_t m1 = upper ? 0x30u : 0x3Fu, m2 = upper ? 0x0Fu : 0u;
      const uint32_t sc = ((head.y >> s1) & m1) | ((head.w >> s) & m2);
      const uint32_t m = ((head.z >> s1) & m1) | ((head.w >> (s + 4)) & m2);
      return pair(half_to_float(head.x & 0xFFFFu) * float(sc),
                  -half_to_float(head.x >> 16) * float(m));
    }
  }
};

// Q4_K: sub-block j is the low (j even) or high nibbles of qs[32 (j/2)..]. IN_PLACE: sub-block
// j's nibbles stay where they are (j odd: the high nibbles, 16 times their value, as unsigned
// bytes): the kernel multiplies them by dp4a.u32.s32 and shifts the sub-block's sum right by
// shift(j), exactly (a multiple of 16).
template <>
struct Int8Format<12> : Int8Nibble256<Q4_K> {
  static constexpr bool SPLIT = false, WORDS16 = true, IN_PLACE = true, WHOLE = false;
  static constexpr int ZERO = 0;
  __device__ __forceinline__ static int shift(int j) { return 4 * (j & 1); }
  template <bool ALIGNED>
  __device__ __forceinline__ static void ints(const uint32_t* slot, int at, int j, int (&q)[8]) {
    uint32_t w[8];
    words32<ALIGNED>(slot, at + 16 + 32 * (j >> 1), w);
#pragma unroll
    for (int i = 0; i < 8; ++i) q[i] = int(w[i] & ((j & 1) ? 0xF0F0F0F0u : 0x0F0F0F0Fu));
  }
};

// Q5_K: sub-block j's element l is nibble j & 1 of qs[32 (j/2) + l] (qs from byte 48) with
// bit j of qh[l] (qh: bytes 16-47) as its fifth bit: bytes 0..31, signed dp4a as they are.
// Not IN_PLACE: a high nibble in place (16 q) leaves its fifth bit no room in the byte. The
// fifth bits of four elements move from bit j to bit 4 of their bytes by one rotation (a
// funnel shift of qh's word with itself right by j - 4, mod 32; the bits it carries across
// bytes are masked off).
template <>
struct Int8Format<13> : Int8Nibble256<Q5_K> {
  static constexpr bool SPLIT = false, WORDS16 = true, IN_PLACE = false, WHOLE = false;
  static constexpr int ZERO = 0;
  template <bool ALIGNED>
  __device__ __forceinline__ static void ints(const uint32_t* slot, int at, int j, int (&q)[8]) {
    uint32_t qs[8], qh[8];
    words32<ALIGNED>(slot, at + 48 + 32 * (j >> 1), qs);
    words32<ALIGNED>(slot, at + 16, qh);
    const int nibble = 4 * (j & 1), rot = (j + 28) & 31;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      q[i] = int(((qs[i] >> nibble) & 0x0F0F0F0Fu)
                 | (__funnelshift_r(qh[i], qh[i], rot) & 0x10101010u));
    }
  }
};

// Q6_K: sub-block j = 4n + t, as formats.h's Q6_K describes, minus 32 bytewise (__vsub4; a
// ZERO of 32, as Q5_0's 16, is untried)
template <>
struct Int8Format<14> {
  static constexpr bool SPLIT = true, WORDS16 = false, IN_PLACE = false, WHOLE = false;
  static constexpr int ZERO = 0;
  __device__ __forceinline__ static void ints(const uint32_t* slot, int at, int j, int (&q)[8]) {
    const int n = j >> 2, t = j & 3;
    uint32_t lo[8], hi[8];
    words_at(slot, at + 64 * n + 32 * (t & 1), lo);
    words_at(slot, at + 128 + 32 * n, hi);
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      const uint32_t v = ((lo[i] >> (4 * (t >> 1))) & 0x0F0F0F0Fu) | (((hi[i] >> (2 * t)) & 0x03030303u) << 4);
      q[i] = int(__vsub4(v, 0x20202020u));
    }
  }
  // The scales of sub-block j's halves (groups 2j and 2j + 1, adjacent bytes) from one 2-byte
  // load where formats.h's Q6_K::group takes a byte each: the same products
  __device__ __forceinline__ static float2 halves(const uint32_t* slot, int at, int j) {
    const uint8_t* b = reinterpret_cast<const uint8_t*>(slot) + at;
    const uint32_t s = ld_u16(b + 192 + 2 * j);
    const float d = ld_f16(b + 208);
    return pair(d * float(int((s & 0xFFu) ^ 128u) - 128), d * float(int((s >> 8) ^ 128u) - 128));
  }
};

// A compile-time bool as a type, for a generic lambda's two instantiations
template <bool B>
struct Flag {
  static constexpr bool value = B;
};

// A sub-block's two halves dotted with x's words: q's bytes signed, or UNSIGNED
template <bool UNSIGNED>
__device__ __forceinline__ void dots(const int (&q)[8], uint4 xa, uint4 xb, int& lo, int& hi) {
  auto dp = [](int a, int b, int c) {
    if constexpr (UNSIGNED) {
      return dp4a_us(a, b, c);
    } else {
      return __dp4a(a, b, c);
    }
  };
  lo = dp(q[0], int(xa.x), 0);
  lo = dp(q[1], int(xa.y), lo);
  lo = dp(q[2], int(xa.z), lo);
  lo = dp(q[3], int(xa.w), lo);
  hi = dp(q[4], int(xb.x), 0);
  hi = dp(q[5], int(xb.y), hi);
  hi = dp(q[6], int(xb.z), hi);
  hi = dp(q[7], int(xb.w), hi);
}

// Rounds 32 values into q (32 bytes, 16-byte aligned); returns d, and the sum of q in *sum.
__device__ __forceinline__ float round_values(const float (&v)[32], int8_t* q, int* sum) {
  float amax = 0.0f;
#pragma unroll
  for (int k = 0; k < 32; ++k) amax = fmaxf(amax, fabsf(v[k]));
  const float inv = amax > 0.0f ? __fdiv_rn(127.0f, amax) : 0.0f;
  uint32_t words[8];
  int s = 0;
#pragma unroll
  for (int k = 0; k < 8; ++k) {
    int n[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      n[j] = int(__float_as_uint(fmaf(v[4 * k + j], inv, 12582912.0f)) - 0x4B400000u);
      s += n[j];
    }
    words[k] = __byte_perm(__byte_perm(n[0], n[1], 0x0040), __byte_perm(n[2], n[3], 0x0040), 0x5410);
  }
  uint4* out = reinterpret_cast<uint4*>(q);
  out[0] = make_uint4(words[0], words[1], words[2], words[3]);
  out[1] = make_uint4(words[4], words[5], words[6], words[7]);
  *sum = s;
  return __fdiv_rn(amax, 127.0f);
}

// Rounds the 32 values at x (global memory) into q, as round_values
template <class T>
__device__ __forceinline__ float round_block(const T* x, int8_t* q, int* sum) {
  float v[32];
#pragma unroll
  for (int k = 0; k < 8; ++k) {
    const float4 f = load4(x + 4 * k);
    v[4 * k] = f.x; v[4 * k + 1] = f.y; v[4 * k + 2] = f.z; v[4 * k + 3] = f.w;
  }
  return round_values(v, q, sum);
}

// x [k] rounded once for every product that reads it (gemv_int8 with XPRE 1 or 2), where each
// of its CTAs would round it again: one thread a 32-value block (round_block, so the same
// values as the CTAs' own rounding). `out` is one buffer: xq (k int8), then xd (k / 32 float),
// then xsum (k / 32 int), 16-byte aligned. k is a multiple of 32; CTAs of THREADS threads.
template <class T, int THREADS>
__device__ __forceinline__ void round_x(const T* x, uint8_t* out, int k) {
  const int b = int(blockIdx.x) * THREADS + int(threadIdx.x), nx = k / 32;
  if (b >= nx) return;
  float* xd = reinterpret_cast<float*>(out + k);
  xd[b] = round_block(x + 32 * b, reinterpret_cast<int8_t*>(out) + 32 * b,
                      reinterpret_cast<int*>(xd + nx) + b);
}

// n 4-byte words from src to dst (shared memory, 16-byte aligned) by the CTA's `threads`: four
// at a time where src is 16-byte aligned too, and the tail one at a time.
__device__ __forceinline__ void copy_words(uint32_t* dst, const uint32_t* src, int n,
                                           int threads) {
  int done = 0;
  if ((reinterpret_cast<uintptr_t>(src) & 15) == 0) {
    done = n & ~3;
    for (int i = threadIdx.x; i < n / 4; i += threads) {
      reinterpret_cast<uint4*>(dst)[i] = reinterpret_cast<const uint4*>(src)[i];
    }
  }
  for (int i = done + threadIdx.x; i < n; i += threads) dst[i] = src[i];
}

// v rounded to T as the plain product's output is (store1: to nearest, ties to even).
template <class T>
__device__ __forceinline__ T rounded(float v) {
  T t;
  store1(&t, v);
  return t;
}

// act(g) * u for g and u already rounded to T, operation for operation as MLX's compiled
// `act(g) * u` computes it on T (layers.py's `gated`: mx.compile fuses the graph into one
// kernel of MLX's functors, each intermediate a T): the same functors in the same order, and
// the Python constants rounded as MLX rounds a scalar (to float, then to T). So the fused
// product rounds as the unfused path does: g and u each to T, then every operation to T.
//   ACT 1, nn.silu:        g * sigmoid(g)
//   ACT 2, nn.gelu_approx: 0.5 * g * (1 + tanh(sqrt(2 / pi) * (g + 0.044715 * g ** 3)))
template <int ACT, class T>
__device__ __forceinline__ T glu(T g, T u) {
  using mlx::core::cu::Add, mlx::core::cu::Multiply;
  T a;
  if constexpr (ACT == 1) {
    a = Multiply{}(g, mlx::core::cu::Sigmoid{}(g));
  } else {
    static_assert(ACT == 2, "ACT: 0 plain product, 1 SiLU, 2 GELU (tanh)");
    const T cube = mlx::core::cu::Power{}(g, rounded<T>(3.0f));
    const T inner = Add{}(g, Multiply{}(rounded<T>(0.044715f), cube));
    const T t = mlx::core::cu::Tanh{}(Multiply{}(rounded<T>(0.7978845608028654f), inner));
    a = Multiply{}(Multiply{}(rounded<T>(0.5f), g), Add{}(rounded<T>(1.0f), t));
  }
  return Multiply{}(a, u);
}

// The plain product's epilogue in a pre-norm block: where the product's output is a residual
// stream's next delta and an RMS norm follows the add (a LLaMA layer's attention output and
// down products), the product adds and normalises itself. store() takes each output row's sum
// (lane 0 of its warp): h = T(residual + T(sum)), the new stream, as the separate add rounds it,
// and the sum of h^2 over the warp's rows. add_norm_finish() then adds the CTA's warps, and the
// last CTA to finish (an atomic count in scratch[0], which that CTA resets for the next launch)
// adds every CTA's sum in CTA order and writes normed = T(w * T(h * rsqrt(mean(h^2) + eps))),
// rounded as add_rms_norm.cuh and MLX's rms_norm round. Why: the add and the norm as their own
// kernel cost MLX ~4.5 us of host time and ~3.5 us of GPU time, twice a layer (one request's
// decoding is host-bound); the last CTA's pass over 4,096 values is ~1-2 us of tail.
template <class T>
struct AddNorm {
  const T* residual;  // [N], the stream before the add
  const T* weight;    // [N], the norm's
  float eps;
  T* h;               // out [N]
  T* normed;          // out [N]
  uint32_t* scratch;  // [0]: CTAs finished; [1 + c]: CTA c's sum of h^2, as float bits
  float ss = 0.0f;    // lane 0's sum of h^2 over its warp's rows

  __device__ __forceinline__ void store(int row, float sum) {
    T y, hr;
    store1(&y, sum);
    const float v = load1(residual + row) + load1(&y);
    store1(h + row, v);
    store1(&hr, v);
    const float r = load1(&hr);
    ss = fmaf(r, r, ss);
  }
};

// Where lane 0 of a warp puts an output row's sum: y[row] rounded to T, or an epilogue's store
template <class T>
__device__ __forceinline__ void put_row(T* y, int row, float sum) {
  store1(y + row, sum);
}
template <class T>
__device__ __forceinline__ void put_row(AddNorm<T>* e, int row, float sum) {
  e->store(row, sum);
}

// Activation row r's outputs: y + r * outs (an epilogue takes one activation row only)
template <class T>
__device__ __forceinline__ T* row_outputs(T* y, int r, int outs) {
  return y + size_t(r) * outs;
}
template <class T>
__device__ __forceinline__ AddNorm<T>* row_outputs(AddNorm<T>* e, int, int) {
  return e;
}

// ACT 0: y[N] = W x. ACT 1 or 2: the gated mode (see the top of this file), y[N / 2].
// XROWS: activation rows, x [XROWS, K] and y [XROWS, N] (or [XROWS, N / 2]): a few decoding
// requests' rows share each weight's loads and decode, every row rounded into its own copy in
// shared memory (rows at K values apart), XREG and XPRE off and no epilogue but for one row.
// Why: at two rows the float kernel and gemm_blocks took about three times one row's gemv_int8
// time (notes/gpu-kernels.md, session 46), where the weights' bytes are the same.
// XPRE 0: x [K] of T, rounded by each CTA into its shared memory. XPRE 1, 2: x is round_x's
// buffer for this K (X = uint8_t), the same values rounded once beforehand: 1 copies it into
// the CTA's shared memory instead of rounding, 2 leaves it in global memory, where the products
// read it through L1 (KCAP 0: no shared memory for it). The products are the same either way.
// cta, ctas: this CTA's place among the product's CTAs, where a launch runs other work in CTAs
// of its own too (notes/patches/fused-attention.patch); by default the grid's.
template <int GGML_TYPE, class T, int WARPS, int STAGES, int PER_LANE, int KCAP, bool XREG,
          int ACT, int XPRE = 0, int XROWS = 1, class X = T, class Y = T*>
__device__ __forceinline__ void gemv_int8(const uint8_t* w, const X* x, Y y, int N,
                                          int row_bytes, int cta = int(blockIdx.x),
                                          int ctas = int(gridDim.x)) {
  constexpr bool GATED = ACT != 0;
  using F = typename FormatOf<GGML_TYPE>::type;
  using I = Int8Format<GGML_TYPE>;
  constexpr int SUBS = F::BE / 32;  // 32-element sub-blocks per block
  constexpr int BLOCKS = CHUNK_ELEMS * PER_LANE / F::BE;  // a chunk: PER_LANE sub-blocks a lane
  constexpr int BYTES = BLOCKS * F::BB;
  // room for the chunk's offset in its first 16-byte word and for the extra word words_at reads
  constexpr int SLOT = (BYTES + 15 + 6 + 15) / 16 * 16;
  static_assert(BLOCKS * SUBS == 32 * PER_LANE, "whole blocks per chunk");
  // All of the CTA's shared memory is dynamic (Int8Tiling.shared_bytes): the staging slots,
  // then x's rounded copy xq[KCAP] with its scales xd and sums xsum (KCAP / 32 each). Three
  // stages of whole-row chunks for eight warps pass the 48 KiB a CTA may declare, and MLX opts
  // a kernel in to more only when its dynamic part alone passes 48,000 bytes: with x's copy
  // static, 8/2/4 at K = 14,336 (17.5 KiB static, 36.5 dynamic) failed to launch (session 10).
  // MLX also opts in once per compiled kernel, at its first launch: KCAP stays a template
  // argument, so every size of shared memory is its own kernel.
  VX_DYNAMIC_SHARED(shared_words);
  auto stage = reinterpret_cast<uint32_t (*)[STAGES][SLOT / 4]>(shared_words);
  static_assert(XPRE == 0 || XPRE == 1 || XPRE == 2, "XPRE: 0 round here, 1 copy, 2 global");
  static_assert(XROWS >= 1 && (XROWS == 1 || (XPRE == 0 && !XREG)),
                "several activation rows: each CTA rounds them, into shared memory");
  int8_t* sq = reinterpret_cast<int8_t*>(shared_words + WARPS * STAGES * SLOT / 4);
  float* sd = reinterpret_cast<float*>(sq + XROWS * KCAP);
  int* ssum = reinterpret_cast<int*>(sd + XROWS * KCAP / 32);

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int nb = row_bytes / F::BB;  // blocks per row
  const int nx = nb * SUBS;  // 32-element blocks of x
  // where the products read x's rounded copy: shared memory, or round_x's buffer (XPRE 2)
  const int8_t* xq = XPRE == 2 ? reinterpret_cast<const int8_t*>(x) : sq;
  const float* xd =
      XPRE == 2 ? reinterpret_cast<const float*>(reinterpret_cast<const int8_t*>(x) + 32 * nx) : sd;
  const int* xsum = XPRE == 2 ? reinterpret_cast<const int*>(xd + nx) : ssum;
  const int nchunks = (nb + BLOCKS - 1) / BLOCKS;
  const int gw = cta * WARPS + warp, all = ctas * WARPS;
  const int outs = GATED ? N / 2 : N;  // outputs: rows, or (gate, up) row pairs
  // (row, chunk) pairs this warp streams: every chunk of each of its rows, or of both rows of
  // each of its pairs
  const int items = gw < outs ? ((outs - 1 - gw) / all + 1) * nchunks * (GATED ? 2 : 1) : 0;

  // Two cursors over this warp's (row, chunk) pairs, advanced without division (a lane's
  // share of an item is one or two sub-blocks: per-item index arithmetic is not negligible).
  // Gated, a gate row i < outs is followed by its up row i + outs, then comes gate row i + all.
  struct Cursor {
    int row, chunk;
    __device__ __forceinline__ size_t offset(int row_bytes) const {
      return size_t(row) * row_bytes + size_t(chunk) * BYTES;
    }
    __device__ __forceinline__ void next(int nchunks, int all, int outs) {
      if (++chunk < nchunks) return;
      chunk = 0;
      if constexpr (GATED) row += row < outs ? outs : all - outs;
      else row += all;
    }
  };
  Cursor ahead{gw, 0}, here{gw, 0};
  auto issue = [&](int slot) {
    const int len = (min(nb, (ahead.chunk + 1) * BLOCKS) - ahead.chunk * BLOCKS) * F::BB;
    stage_bytes(reinterpret_cast<uint8_t*>(stage[warp][slot]), w + ahead.offset(row_bytes), len,
                lane);
    ahead.next(nchunks, all, outs);
  };

  // The first weight copies fly while the CTA rounds x. (Filling every slot first, one chunk
  // more in flight meanwhile, timed 5-7% slower in session 10, though on another machine than
  // the code before it: notes/gpu-kernels.md.)
#pragma unroll
  for (int i = 0; i < STAGES - 1; ++i) {
    if (i < items) issue(i);
    cp_async_commit();
  }
  if constexpr (XPRE == 0) {  // (row r's block e is block r * nx + e: rows K values apart)
    for (int b = threadIdx.x; b < XROWS * nx; b += WARPS * 32) {
      sd[b] = round_block(x + 32 * b, sq + 32 * b, ssum + b);
    }
  } else if constexpr (XPRE == 1) {  // the same values, copied
    const uint32_t* src = reinterpret_cast<const uint32_t*>(x);
    copy_words(reinterpret_cast<uint32_t*>(sq), src, 8 * nx, WARPS * 32);
    copy_words(reinterpret_cast<uint32_t*>(sd), src + 8 * nx, nx, WARPS * 32);
    copy_words(reinterpret_cast<uint32_t*>(ssum), src + 9 * nx, nx, WARPS * 32);
  }
  if constexpr (XPRE != 2) __syncthreads();

  // XREG: a lane's share of x's first chunk stays in registers. When a row is one chunk
  // (Llama's 4,096 columns with four sub-blocks a lane) every row reads the same x, so the
  // inner loop loses its shared-memory loads of x, about half its shared-memory traffic.
  // Costs ~10 registers a sub-block a lane. Later chunks, if any, read shared memory.
  uint4 xr[XREG ? PER_LANE : 1][2];
  float xdr[XREG ? PER_LANE : 1];
  int xsr[XREG ? PER_LANE : 1];
  if constexpr (XREG) {
#pragma unroll
    for (int u = 0; u < PER_LANE; ++u) {
      const int e = min(lane + 32 * u, nx - 1);  // chunk 0: x's block is the sub-block
      xr[u][0] = reinterpret_cast<const uint4*>(xq + 32 * e)[0];
      xr[u][1] = reinterpret_cast<const uint4*>(xq + 32 * e)[1];
      xdr[u] = xd[e];
      xsr[u] = xsum[e];
    }
  }

  const int base = int(reinterpret_cast<uintptr_t>(w) & 15);
  float acc[XROWS] = {};
  float gate[XROWS] = {};  // gated: the current pair's gate sums, held by every lane
  for (int i = 0; i < items; ++i) {
    if (i + STAGES - 1 < items) issue((i + STAGES - 1) % STAGES);
    cp_async_commit();
    cp_async_wait<STAGES - 1>();
    __syncwarp();

    const uint32_t* slot = stage[warp][i % STAGES];
    const int at0 = int((base + here.offset(row_bytes)) & 15);
    // A's chunk: sub-blocks read as format I reads them with ALIGNED = A (WORDS16 formats).
    // FULL: the chunk lies within the row and no sub-block is checked (WHOLE formats, tested
    // once a chunk: each check's branch held the next sub-block's loads behind it; nvdisasm's
    // static stall sum of Q4_0's chunk 450 -> 308 cycles, session 15).
    auto sub_blocks = [&](auto aligned, auto full) {
      constexpr bool A = decltype(aligned)::value, FULL = decltype(full)::value;
#pragma unroll
      for (int u = 0; u < PER_LANE; ++u) {
        const int sub = lane + 32 * u, blk = sub / SUBS, j = sub % SUBS;
        const int b = here.chunk * BLOCKS + blk;  // the block of the row
        if (!FULL && b >= nb) break;
        [[maybe_unused]] const int at = at0 + blk * F::BB;  // (WHOLE: dot's own addressing)
        [[maybe_unused]] int q[8];
        if constexpr (!I::WHOLE) {
          if constexpr (I::WORDS16) I::template ints<A>(slot, at, j, q);
          else I::ints(slot, at, j, q);
        }
        const bool held = XREG && here.chunk == 0;
        const int h = XREG ? u : 0;  // the held slot (arrays of one when nothing is held)
#pragma unroll
        for (int r = 0; r < XROWS; ++r) {
          const int e = (r * nx) + b * SUBS + j;  // x's 32-element block (of row r)
          const uint4 xa = held ? xr[h][0] : reinterpret_cast<const uint4*>(xq + 32 * e)[0];
          const uint4 xb = held ? xr[h][1] : reinterpret_cast<const uint4*>(xq + 32 * e)[1];
          const float dx = held ? xdr[h] : xd[e];
          [[maybe_unused]] const int xs = held ? xsr[h] : xsum[e];  // (read where used)
          float t;
          if constexpr (I::WHOLE) {  // (the block's shared-memory words read again a row)
            float d;
            int sum;
            if constexpr (I::WORDS16) sum = I::template dot<A>(slot, at0, lane, u, xa, xb, xs, d);
            else sum = I::dot(slot, at0, lane, u, xa, xb, xs, d);
            t = d * float(sum);
          } else {
            int lo, hi;
            dots<I::IN_PLACE>(q, xa, xb, lo, hi);
            if constexpr (I::SPLIT) {
              const float2 sc = I::halves(slot, at, j);
              t = fmaf(sc.x, float(lo), sc.y * float(hi));
            } else {
              float2 sc;
              if constexpr (I::WORDS16) sc = I::template group<A>(slot, at, j);
              else sc = I::group(slot, at, j);
              int sum = lo + hi;
              if constexpr (I::IN_PLACE) sum >>= I::shift(j);  // exact: a multiple of 16
              if constexpr (I::ZERO != 0) sum -= I::ZERO * xs;  // the sum of (q - ZERO) x
              t = sc.x * float(sum);
              if constexpr (F::HAS_MIN) t = fmaf(sc.y, float(xs), t);
            }
          }
          acc[r] = fmaf(dx, t, acc[r]);
        }
      }
    };
    auto aligned_or_not = [&](auto full) {
      if constexpr (I::WORDS16) {
        if ((at0 & 15) == 0) sub_blocks(Flag<true>{}, full);
        else sub_blocks(Flag<false>{}, full);
      } else {
        sub_blocks(Flag<false>{}, full);
      }
    };
    if constexpr (I::WHOLE) {
      if ((here.chunk + 1) * BLOCKS <= nb) aligned_or_not(Flag<true>{});
      else aligned_or_not(Flag<false>{});
    } else {
      aligned_or_not(Flag<false>{});
    }
    if (here.chunk == nchunks - 1) {
#pragma unroll
      for (int r = 0; r < XROWS; ++r) {
        float s = acc[r];
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xFFFFFFFFu, s, o);
        if constexpr (!GATED) {
          if (lane == 0) put_row(row_outputs(y, r, outs), here.row, s);
        } else if (here.row < outs) {
          gate[r] = s;  // the xor reduction leaves the sum in every lane
        } else if (lane == 0) {
          y[size_t(r) * outs + here.row - outs] = glu<ACT>(rounded<T>(gate[r]), rounded<T>(s));
        }
        acc[r] = 0.0f;
      }
    }
    here.next(nchunks, all, outs);
    __syncwarp();  // the next issue overwrites this stage
  }
}

// Whether this CTA is the last of the grid to get here, counted in *count (zero before the
// launch; the caller resets it once it is done). Every thread calls it after a barrier that
// follows the CTA's writes (thread 0's own may come between). Ordered as cooperative groups'
// grid sync orders a grid: thread 0 alone fences (release) and counts, and in the last CTA
// fences again (acquire) before the barrier that lets its threads read what the other CTAs
// wrote (through L2). Shared by the AddNorm epilogue and feed_forward.cuh.
__device__ __forceinline__ bool last_of_grid(uint32_t* count) {
  __shared__ bool last;
  if (threadIdx.x == 0) {
    fence_acq_rel();
    last = atomicAdd(count, 1u) == gridDim.x - 1;
    if (last) fence_acq_rel();
  }
  __syncthreads();
  return last;
}

struct Nothing {
  __device__ __forceinline__ void operator()() const {}
};

// After gemv_int8 with an AddNorm epilogue (every thread of every CTA; see AddNorm): the CTA's
// sum of h^2 into scratch, then the last CTA (last_of_grid) writes normed; h and the sums are
// read through L2. (Session 20's ~15 us a launch over the plain product were not its fences
// but the 4-byte eps every thread read: gpu.float_constant; session 21.)
// The last CTA's loads are issued together, U 16-byte words of h and of w a thread at a time:
// one after another (the compiler cannot move a load of h past a store to normed) they took
// ~30 us of tail at 4,096 rows (session 20, call B).
// last(): what else the last CTA does, after normed (feed_forward.cuh resets its counts).
template <int WARPS, class T, class Last = Nothing>
__device__ __forceinline__ void add_norm_finish(const AddNorm<T>& e, int n, Last last = {}) {
  constexpr int THREADS = WARPS * 32, VEC = 16 / sizeof(T), U = 4;
  __shared__ float part[32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) part[warp] = e.ss;
  __syncthreads();
  if (threadIdx.x == 0) {
    float s = 0.0f;
    for (int k = 0; k < WARPS; ++k) s += part[k];
    e.scratch[1 + blockIdx.x] = __float_as_uint(s);
  }
  if (!last_of_grid(e.scratch)) return;
  // every CTA's sum, in an order fixed by the grid alone (the same whichever CTA is last)
  float s = 0.0f;
#pragma unroll 4
  for (int c = threadIdx.x; c < int(gridDim.x); c += THREADS) {
    s += __uint_as_float(__ldcg(e.scratch + 1 + c));
  }
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xFFFFFFFFu, s, o);
  __syncthreads();  // part[] is reused
  if (lane == 0) part[warp] = s;
  __syncthreads();
  float total = 0.0f;
  for (int k = 0; k < WARPS; ++k) total += part[k];
  const float inv = rsqrtf(total / float(n) + e.eps);
  auto norm1 = [&](float h, float w) {  // as add_rms_norm.cuh rounds: T(w * T(h * inv))
    T scaled;
    store1(&scaled, h * inv);
    return w * load1(&scaled);
  };
  // 16-byte words where h, w and normed all start on one (MLX's buffers do), then the rest
  const bool words16 = ((reinterpret_cast<uintptr_t>(e.h) | reinterpret_cast<uintptr_t>(e.weight)
                         | reinterpret_cast<uintptr_t>(e.normed)) & 15) == 0;
  const int words = words16 ? n / VEC : 0;
  for (int base = 0; base < words; base += THREADS * U) {
    uint4 hv[U], wv[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int j = base + u * THREADS + int(threadIdx.x);
      if (j < words) {
        hv[u] = __ldcg(reinterpret_cast<const uint4*>(e.h) + j);
        wv[u] = reinterpret_cast<const uint4*>(e.weight)[j];
      }
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int j = base + u * THREADS + int(threadIdx.x);
      if (j < words) {
        const T* eh = reinterpret_cast<const T*>(&hv[u]);
        const T* ew = reinterpret_cast<const T*>(&wv[u]);
        uint4 out;
        T* eo = reinterpret_cast<T*>(&out);
#pragma unroll
        for (int k = 0; k < VEC; ++k) store1(eo + k, norm1(load1(eh + k), load1(ew + k)));
        reinterpret_cast<uint4*>(e.normed)[j] = out;
      }
    }
  }
  for (int j = words * VEC + int(threadIdx.x); j < n; j += THREADS) {
    store1(e.normed + j, norm1(load1_l2(e.h + j), load1(e.weight + j)));
  }
  last();
  if (threadIdx.x == 0) e.scratch[0] = 0u;  // for the next launch (kernels run in order)
}

}  // namespace vx
