// A few activation rows (library.BLOCKS_ROWS) times the file's own blocks of any format of
// formats.h, on Apple GPUs' simdgroup matrices: the Metal twin of cuda/gemm_blocks.cuh, with its
// names and tiling (a simdgroup owns 16 weight rows and MT activation rows; WK simdgroups split
// the row's chunks of GEMM_CHUNK columns and add their sums in a fixed order; STAGES rotates
// the staged chunks). Each weight is decoded once for all the rows, scale * q + min in float32
// rounded once to x's type T, the value the dequantizing kernel writes, and the products are
// summed in float32.
//
// What differs, and why: CUDA's mma.sync takes its operands from registers in a layout PTX
// documents, so each lane decodes its own. Metal documents no layout for a simdgroup matrix's
// elements in the lanes, only loads and stores through memory, so here each simdgroup decodes
// a span of GEMM_SPAN k slots of its 16 rows into threadgroup memory, gathers x's values at
// the same k slots beside them, and loads both as 8x8 float matrices (the product's operands
// and its accumulator share one type; float keeps T's values exact). As on CUDA, the order of
// k inside the product is free as long as both operands agree: slot 8j + i of a chunk is
// element i of piece j (formats.h: 8 elements, two runs of 4), so a piece decodes into 8
// consecutive slots. The library keeps WK * STAGES <= 2: threadgroup memory is 32 KiB.
// NEVER COMPILED OR RUN by Apple's Metal compiler or on a GPU: no Apple machine exists where
// this project is developed. Emulated on the CPU as C++ (tests/emulation.py, metal_program).

namespace vx {

constant constexpr int GEMM_CHUNK = 256;  // one super-block of the K formats, 8 blocks of the others
constant constexpr int GEMM_SPAN = 32;    // k slots decoded at a time: 4 pieces

template <class F>
struct GemmChunk {
  static constant constexpr int BLOCKS = GEMM_CHUNK / F::BE;
  static constant constexpr int GROUPS = BLOCKS * F::G;
  static constant constexpr int BYTES = BLOCKS * F::BB;
  static constant constexpr int SLOT = BYTES;  // block sizes are even: rows stay 2-byte aligned
  static_assert(BLOCKS >= 1 && BLOCKS * F::BE == GEMM_CHUNK, "whole blocks a chunk");
  static_assert(BLOCKS * F::P == 32, "32 pieces a chunk");
};

// stage: [WK][STAGES][16][SLOT] bytes, scales: [WK][16][GROUPS], a: [WK][16][GEMM_SPAN],
// xs: [WK][MT][GEMM_SPAN], partial: [WK][16][MT].
template <class F, class T, int WK, int MT, int STAGES>
inline void gemm_blocks(const device uint8_t* w, const device T* x, device T* y, int N,
                        int row_bytes, int M, threadgroup uint8_t* stage,
                        threadgroup float2* scales, threadgroup float* a, threadgroup float* xs,
                        threadgroup float* partial, uint lane, uint wk, uint cta) {
  typedef GemmChunk<F> C;
  constexpr int MTILES = MT / 8, SPAN_PIECES = GEMM_SPAN / 8;
  static_assert(MT % 8 == 0 && MTILES >= 1, "MT: whole tiles of 8 rows");
  const int K = row_bytes / F::BB * F::BE, nchunks = K / GEMM_CHUNK;
  const int row_ctas = (N + 15) / 16;
  const int n0 = int(cta % uint(row_ctas)) * 16, m0 = int(cta / uint(row_ctas)) * MT;
  const int mine = int(wk) < nchunks ? (nchunks - 1 - int(wk)) / WK + 1 : 0;
  threadgroup float2* sc = scales + int(wk) * 16 * C::GROUPS;
  threadgroup float* my_a = a + int(wk) * 16 * GEMM_SPAN;
  threadgroup float* my_x = xs + int(wk) * MT * GEMM_SPAN;

  // D = A B: A's rows are weight rows (h = 0: rows 0-7 of the tile, h = 1: rows 8-15), B's
  // columns activation rows (tile m: 8m .. 8m + 7)
  metal::simdgroup_float8x8 acc[2][MTILES];
  for (int h = 0; h < 2; ++h)
    for (int m = 0; m < MTILES; ++m) acc[h][m] = metal::make_filled_simdgroup_matrix<float, 8, 8>(0.0f);

  for (int i = 0; i < mine; ++i) {
    const int ch = int(wk) + i * WK;
    threadgroup uint8_t* buf = stage + (int(wk) * STAGES + i % STAGES) * 16 * C::SLOT;
    // The chunk's 16 rows as one list of 2-byte halves, the lanes taking every 32nd, as
    // CUDA's stages one list of 16-byte words (a loop over the rows left lanes idle in each
    // row's last pass). Rows past N (the last threadgroup) read row N - 1, never stored.
    constexpr int HALVES = C::BYTES / 2;
    for (int k = int(lane); k < 16 * HALVES; k += 32) {
      const int r = k / HALVES, j = k % HALVES;
      const device ushort* src = reinterpret_cast<const device ushort*>(
          w + size_t(metal::min(n0 + r, N - 1)) * row_bytes + size_t(ch) * C::BYTES);
      reinterpret_cast<threadgroup ushort*>(buf + r * C::SLOT)[j] = src[j];
    }
    metal::simdgroup_barrier(metal::mem_flags::mem_threadgroup);
    for (int k = int(lane); k < 16 * C::GROUPS; k += 32) {
      const int r = k / C::GROUPS, gi = k % C::GROUPS;
      sc[k] = F::group(buf + r * C::SLOT + (gi / F::G) * F::BB, gi % F::G);
    }
    metal::simdgroup_barrier(metal::mem_flags::mem_threadgroup);

    for (int s = 0; s < 32 / SPAN_PIECES; ++s) {
      // the span's pieces of the 16 rows, scaled and rounded to T: slots 8j .. 8j + 7
      for (int it = int(lane); it < 16 * SPAN_PIECES; it += 32) {
        const int r = it / SPAN_PIECES, j = it % SPAN_PIECES, piece = s * SPAN_PIECES + j;
        const int b = piece / F::P, p = piece % F::P;
        float q[8];
        F::piece(buf + r * C::SLOT + b * F::BB, p, q);
        for (int run = 0; run < 2; ++run) {
          const float2 sm = sc[r * C::GROUPS + b * F::G + F::group_of(p, run)];
          for (int e = 0; e < 4; ++e)
            my_a[r * GEMM_SPAN + 8 * j + 4 * run + e] = float(T(metal::fma(sm.x, q[4 * run + e], sm.y)));
        }
      }
      // x's values at the same slots, each activation row's run of 4 (rows past M clamped)
      for (int it = int(lane); it < MT * SPAN_PIECES * 2; it += 32) {
        const int m = it / (2 * SPAN_PIECES), j = it / 2 % SPAN_PIECES, run = it % 2;
        const int piece = s * SPAN_PIECES + j, b = piece / F::P, p = piece % F::P;
        const int e = ch * GEMM_CHUNK + b * F::BE + F::elem_of(p, run);
        const float4 v = load4(x + size_t(metal::min(m0 + m, M - 1)) * K + e);
        threadgroup float* to = my_x + m * GEMM_SPAN + 8 * j + 4 * run;
        to[0] = v.x;
        to[1] = v.y;
        to[2] = v.z;
        to[3] = v.w;
      }
      metal::simdgroup_barrier(metal::mem_flags::mem_threadgroup);
      for (int kk = 0; kk < GEMM_SPAN; kk += 8) {
        metal::simdgroup_float8x8 wt[2];
        metal::simdgroup_load(wt[0], my_a + kk, GEMM_SPAN);
        metal::simdgroup_load(wt[1], my_a + 8 * GEMM_SPAN + kk, GEMM_SPAN);
        for (int m = 0; m < MTILES; ++m) {
          metal::simdgroup_float8x8 xt;  // 8 slots x 8 activation rows: my_x's tile transposed
          metal::simdgroup_load(xt, my_x + 8 * m * GEMM_SPAN + kk, GEMM_SPAN, ulong2(0, 0), true);
          for (int h = 0; h < 2; ++h) metal::simdgroup_multiply_accumulate(acc[h][m], wt[h], xt, acc[h][m]);
        }
      }
      metal::simdgroup_barrier(metal::mem_flags::mem_threadgroup);  // the next span overwrites
    }
  }

  for (int h = 0; h < 2; ++h)
    for (int m = 0; m < MTILES; ++m)
      metal::simdgroup_store(acc[h][m], partial + (int(wk) * 16 + 8 * h) * MT + 8 * m, MT);
  metal::threadgroup_barrier(metal::mem_flags::mem_threadgroup);
  for (int o = int(wk) * 32 + int(lane); o < 16 * MT; o += WK * 32) {
    const int r = o / MT, c = o % MT;
    float v = 0.0f;
    for (int k = 0; k < WK; ++k) v += partial[(k * 16 + r) * MT + c];
    if (m0 + c < M && n0 + r < N) store1(y + size_t(m0 + c) * N + n0 + r, v);
  }
}

}  // namespace vx
