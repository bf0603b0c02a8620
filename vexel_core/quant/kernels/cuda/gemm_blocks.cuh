// A few activation rows (library.BLOCKS_ROWS: a batch of decoding requests) times the file's own
// blocks of any format of formats.h, on the tensor cores. gemm_packed.cuh is the same product
// for Q4_0 repacked (each lane's operands whole words it loads itself); this one serves the
// other formats, whose blocks (18 ... 210 bytes) lie on no fixed alignment. It reuses
// gemm_packed.cuh's mma_16816, pack_pair and sum_k_slices.
//
// Why: those rows took the float kernel (kernels.cuh's gemv), which multiplies every weight
// once per activation row in float32 and is issue-bound: at 8 rows it takes ~3x MLX's bf16
// matmul of the same shape (session 40's "before" column). Here each weight is decoded once,
// for all rows, into the A operand of mma.sync.m16n8k16: scale * q + min computed in float32
// and rounded once to x's type, the value the dequantizing kernel writes, so both paths
// multiply the same weights. On the H200 (session 44, CUPTI) 8 rows of 28672x4096 take 60 us
// of Q4_K against the float kernel's 170, 64 of Q8_0 against 135; 16 requests of a Q4_K model
// decode at 2,049 tok/s against 1,664 with session 43's staging (below). (Not yet at the
// bytes' pace: 700-1,900 GB/s against ~3,800. 8 k-warps a CTA, library.default_blocks_tiling.)
//
// A warp owns a tile of 16 weight rows (A) and MT activation rows (B's 8 columns a tile). As
// kernels.cuh's gemv does, it stages a chunk of GEMM_CHUNK elements of each of its 16 rows into
// shared memory with 16-byte asynchronous copies (kernels.cuh's staged_loop), decodes the chunk's
// (scale, min) groups there once, then reads its pieces (formats.h: 8 elements, two runs of 4
// consecutive ones) from it. The order of k inside an mma is free as long as A and B agree:
// lane (g, t) = (lane / 4, lane % 4) takes piece 4s + t of the chunk for pair s (0..7) of
// steps, in weight rows g and g + 8; the pair's first mma gets run 0 of every lane's piece, the
// second run 1, each run's 4 elements in k slots 2t, 2t + 1, 2t + 8, 2t + 9. B's lane (g, t)
// then holds x's 4 values at the same elements of activation row g: one 8-byte load.
//
// A CTA is WK warps over the same 16 rows, splitting the row's chunks (warp w takes w, w + WK,
// ...) and adding their sums through shared memory in a fixed order. The grid is R x ceil(M /
// MT) CTAs, R = ceil(N / 16). Rows past N or M are read clamped and never stored. K must be a
// multiple of GEMM_CHUNK (library: blocks_applies).

namespace vx {

constexpr int GEMM_CHUNK = 256;  // one super-block of the K formats, 8 blocks of the others

template <class F>
struct GemmChunk {
  static constexpr int BLOCKS = GEMM_CHUNK / F::BE;
  static constexpr int GROUPS = BLOCKS * F::G;
  static constexpr int BYTES = BLOCKS * F::BB;
  static constexpr int SLOT = (BYTES + 30) / 16 * 16;  // the bytes, up to 15 before, whole words
  static_assert(BLOCKS >= 1 && BLOCKS * F::BE == GEMM_CHUNK, "whole blocks a chunk");
  static_assert(BLOCKS * F::P == 32, "32 pieces a chunk: one a lane a pair of steps");
};

template <class F, class T, int WK, int MT, int STAGES>
__device__ __forceinline__ void gemm_blocks(const uint8_t* w, const T* x, T* y, int N,
                                            int row_bytes, int M) {
  using C = GemmChunk<F>;
  constexpr int MTILES = MT / 8;
  static_assert(MT % 8 == 0 && MTILES >= 1, "MT: whole tiles of 8 rows");
  __shared__ __align__(16) uint8_t stage[WK][STAGES][16][C::SLOT];
  __shared__ float2 scales[WK][16][C::GROUPS];

  const int lane = threadIdx.x & 31, wk = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
  const int K = row_bytes / F::BB * F::BE, nchunks = K / GEMM_CHUNK;
  const int row_ctas = (N + 15) / 16, c = int(blockIdx.x);
  const int n0 = (c % row_ctas) * 16, m0 = (c / row_ctas) * MT;
  const int mine = wk < nchunks ? (nchunks - 1 - wk) / WK + 1 : 0;

  // a weight row's chunk (rows clamped), and where it starts in its stage slot (the staged
  // words begin at the 16-byte boundary below it)
  auto src = [&](int r, int ch) {
    return w + size_t(min(n0 + r, N - 1)) * row_bytes + size_t(ch) * C::BYTES;
  };
  auto staged = [&](int r, int ch, int slot) -> const uint8_t* {
    return stage[wk][slot][r] + (reinterpret_cast<uintptr_t>(src(r, ch)) & 15);
  };
  const T* xrow[MTILES];  // this lane's x row g of each tile of 8 (clamped: never stored)
#pragma unroll
  for (int m = 0; m < MTILES; ++m) xrow[m] = x + size_t(min(m0 + 8 * m + g, M - 1)) * K;

  // The chunk's 16 rows as one list of 16-byte words, the lanes taking every 32nd: each lane
  // computes the row of each word it copies, where a loop over the rows kept all 16 row
  // pointers alive in registers and left most lanes idle (10 words a row of Q4_K). Not
  // unrolled: unrolled, ptxas kept the addresses of every copy alive across the chunk's
  // products (nvcc 13, sm_90a: Q4_K at 2-8 rows 95 registers a thread, 67 rolled; the loop
  // over the rows before session 44, 127). Q4_K's 28672x4096 at 8 / 16 rows: 58.3 / 72.0 us
  // against 78.0 / 93.8 with that loop (same tiling, same call).
  auto issue = [&](int i) {
    const int ch = wk + i * WK;
    constexpr int WORDS = C::SLOT / 16;
#pragma unroll 1
    for (int k = lane; k < 16 * WORDS; k += 32) {
      const int r = k / WORDS, j = k % WORDS;
      const uintptr_t start = reinterpret_cast<uintptr_t>(src(r, ch));
      const int off = int(start & 15);
      if (16 * j < off + C::BYTES)
        cp_async16(stage[wk][i % STAGES][r] + 16 * j,
                   reinterpret_cast<const uint8_t*>(start - off) + 16 * j);
    }
  };

  // run 0 and run 1 of each pair in accumulators of their own: two chains of dependent mma
  float acc[2][MTILES][4] = {};
  staged_loop<STAGES>(mine, issue, [&](int i) {
    const int ch = wk + i * WK;
    for (int k = lane; k < 16 * C::GROUPS; k += 32) {
      const int r = k / C::GROUPS, gi = k % C::GROUPS;
      scales[wk][r][gi] = F::group(staged(r, ch, i % STAGES) + (gi / F::G) * F::BB, gi % F::G);
    }
    const uint8_t* const lane_rows[2] = {staged(g, ch, i % STAGES), staged(g + 8, ch, i % STAGES)};
    __syncwarp();

#pragma unroll
    for (int s = 0; s < 8; ++s) {
      const int piece = 4 * s + t, b = piece / F::P, p = piece % F::P;
      // A: runs 0 and 1 of rows g (h = 0) and g + 8 (h = 1), scaled and rounded
      uint32_t a[2][4];
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        float q[8];
        F::piece(lane_rows[h] + b * F::BB, p, q);
#pragma unroll
        for (int run = 0; run < 2; ++run) {
          const float2 sm = scales[wk][g + 8 * h][b * F::G + F::group_of(p, run)];
          const float* v = q + 4 * run;
          a[run][h] = pack_pair(fmaf(sm.x, v[0], sm.y), fmaf(sm.x, v[1], sm.y), x);
          a[run][h + 2] = pack_pair(fmaf(sm.x, v[2], sm.y), fmaf(sm.x, v[3], sm.y), x);
        }
      }
      const int e = ch * GEMM_CHUNK + b * F::BE;
#pragma unroll
      for (int run = 0; run < 2; ++run) {
        const int k0 = e + F::elem_of(p, run);
#pragma unroll
        for (int m = 0; m < MTILES; ++m) {
          const uint2 v = __ldg(reinterpret_cast<const uint2*>(xrow[m] + k0));
          const uint32_t b2[2] = {v.x, v.y};
          mma_16816(acc[run][m], a[run], b2, x);
        }
      }
    }
  });

#pragma unroll
  for (int v = 0; v < MTILES * 4; ++v) (&acc[0][0][0])[v] += (&acc[1][0][0])[v];
  if (!sum_k_slices<1, WK, MTILES * 4>(&acc[0][0][0], 0, wk, lane)) return;
  // D's rows are weight rows g and g + 8, its columns x's rows 2t, 2t + 1 of each tile
#pragma unroll
  for (int m = 0; m < MTILES; ++m) {
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const int row = m0 + 8 * m + 2 * t + e;
      if (row >= M) continue;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int col = n0 + g + 8 * h;
        if (col < N) store1(y + size_t(row) * N + col, acc[0][m][2 * h + e]);
      }
    }
  }
}

}  // namespace vx
