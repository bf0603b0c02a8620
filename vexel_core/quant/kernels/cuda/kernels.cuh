// The two GGUF kernels for CUDA, generic over the formats of common/formats.h.
//
// Both read the file's blocks as they are (or Q4_0 repacked, formats.h's Q4_0x1024: a chunk is
// then one of its super-blocks, and the code is the same): a warp stages a chunk of
// CHUNK_ELEMS elements of a weight row into shared memory with 16-byte asynchronous copies of
// the aligned words that cover it (GGUF blocks are 18, 20, ... 210 bytes, so rows are not
// 16-byte aligned in general), then decodes it from there. Each lane decodes ITEMS pieces of
// 8 elements per row; the (scale, min) of every group in the chunk is decoded once into
// shared memory first and shared by the pieces that use it.
//
// gemv:    y[m, n] = sum_k x[m, k] * W[n, k] for few activation rows (decode). A CTA of WARPS
//          warps owns ROWS weight rows and MT activation rows; its warps split the row's chunks
//          (warp w takes chunks w, w + WARPS, ...) with STAGES copies in flight, each lane
//          accumulates MT x ROWS sums in registers, and the CTA reduces them at the end
//          (shuffles, then shared memory). More than MT activation rows: the grid repeats the
//          row block per group of MT activation rows, neighbouring CTAs reading the same weights
//          so that the repeats hit L2.
// dequant: W as T (prefill: the product is then MLX's matmul). One warp per (row, chunk).

namespace vx {

constexpr int CHUNK_ELEMS = 1024;

template <class F>
struct Chunk {
  static constexpr int BLOCKS = CHUNK_ELEMS / F::BE;
  static constexpr int ITEMS = BLOCKS * F::P / 32;  // pieces per lane and row
  static constexpr int GROUPS = BLOCKS * F::G;
  static constexpr int BYTES = BLOCKS * F::BB;
  // A staged chunk: its bytes plus up to 15 bytes before them, in whole 16-byte words.
  static constexpr int SLOT = (BYTES + 30) / 16 * 16;
  static_assert(BLOCKS * F::BE == CHUNK_ELEMS && ITEMS * 32 == BLOCKS * F::P, "chunk shape");
};

// A warp's pipeline over `count` staged items: issue(i) starts item i's asynchronous copies,
// body(i) uses them once they have landed. STAGES - 1 items are in flight while one is used;
// the stage body(i) read is free again when it returns.
template <int STAGES, class Issue, class Body>
__device__ __forceinline__ void staged_loop(int count, Issue&& issue, Body&& body) {
#pragma unroll
  for (int i = 0; i < STAGES - 1; ++i) {
    if (i < count) issue(i);
    cp_async_commit();
  }
  for (int i = 0; i < count; ++i) {
    if (i + STAGES - 1 < count) issue(i + STAGES - 1);
    cp_async_commit();
    cp_async_wait<STAGES - 1>();
    __syncwarp();
    body(i);
    __syncwarp();  // the next issue overwrites this stage
  }
}

// Decode the (scale, min) of every group of the valid blocks of one staged chunk.
template <class F>
__device__ __forceinline__ void decode_groups(const uint8_t* blocks, int valid, float2* out,
                                              int lane) {
  for (int k = lane; k < Chunk<F>::GROUPS; k += 32) {
    const int b = k / F::G;
    if (b < valid) out[k] = F::group(blocks + b * F::BB, k % F::G);
  }
}

template <class F, class T, int MT, int ROWS, int WARPS, int STAGES>
__device__ __forceinline__ void gemv(const uint8_t* w, const T* x, T* y, int N, int row_bytes,
                                     int M) {
  using C = Chunk<F>;
  __shared__ __align__(16) uint8_t stage[WARPS][STAGES][ROWS][C::SLOT];
  __shared__ float2 scales[WARPS][ROWS][C::GROUPS];
  __shared__ float partial[WARPS][MT][ROWS];

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int nb = row_bytes / F::BB, K = nb * F::BE;
  const int mgroups = (M + MT - 1) / MT;
  const int m0 = int(blockIdx.x % mgroups) * MT;
  const int row0 = int(blockIdx.x / mgroups) * ROWS;
  const int nchunks = (nb + C::BLOCKS - 1) / C::BLOCKS;
  const int mine = warp < nchunks ? (nchunks - 1 - warp) / WARPS + 1 : 0;

  // Rows past N (the last CTA) read row N - 1 and are never written.
  const uint8_t* rows[ROWS];
#pragma unroll
  for (int r = 0; r < ROWS; ++r) rows[r] = w + size_t(min(row0 + r, N - 1)) * row_bytes;

  auto chunk_src = [&](int r, int c) { return rows[r] + size_t(c) * C::BYTES; };
  auto issue = [&](int i) {
    const int c = warp + i * WARPS;
    const int len = (min(nb, (c + 1) * C::BLOCKS) - c * C::BLOCKS) * F::BB;
#pragma unroll
    for (int r = 0; r < ROWS; ++r) stage_bytes(stage[warp][i % STAGES][r], chunk_src(r, c), len, lane);
  };

  float acc[MT][ROWS];
#pragma unroll
  for (int m = 0; m < MT; ++m)
#pragma unroll
    for (int r = 0; r < ROWS; ++r) acc[m][r] = 0.0f;

  staged_loop<STAGES>(mine, issue, [&](int i) {
    const int c = warp + i * WARPS;
    const int valid = min(C::BLOCKS, nb - c * C::BLOCKS);
    const uint8_t* blk[ROWS];
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
      blk[r] = stage[warp][i % STAGES][r] + (reinterpret_cast<uintptr_t>(chunk_src(r, c)) & 15);
      decode_groups<F>(blk[r], valid, scales[warp][r], lane);
    }
    __syncwarp();

#pragma unroll
    for (int it = 0; it < C::ITEMS; ++it) {
      const int item = lane + 32 * it, b = item / F::P, p = item % F::P;
      if (b >= valid) continue;
      float q[ROWS][8];
      float2 s0[ROWS], s1[ROWS];
      const int g0 = b * F::G + F::group_of(p, 0), g1 = b * F::G + F::group_of(p, 1);
#pragma unroll
      for (int r = 0; r < ROWS; ++r) {
        F::piece(blk[r] + b * F::BB, p, q[r]);
        s0[r] = scales[warp][r][g0];
        s1[r] = scales[warp][r][g1];
      }
      const int e = c * CHUNK_ELEMS + b * F::BE;
      const int e0 = e + F::elem_of(p, 0), e1 = e + F::elem_of(p, 1);
#pragma unroll
      for (int m = 0; m < MT; ++m) {
        if (m0 + m >= M) break;
        const T* xm = x + size_t(m0 + m) * K;
        const float4 a = load4(xm + e0), bx = load4(xm + e1);
#pragma unroll
        for (int r = 0; r < ROWS; ++r) {
          float da = q[r][0] * a.x;
          da = fmaf(q[r][1], a.y, da);
          da = fmaf(q[r][2], a.z, da);
          da = fmaf(q[r][3], a.w, da);
          float db = q[r][4] * bx.x;
          db = fmaf(q[r][5], bx.y, db);
          db = fmaf(q[r][6], bx.z, db);
          db = fmaf(q[r][7], bx.w, db);
          float t = fmaf(s0[r].x, da, acc[m][r]);
          t = fmaf(s1[r].x, db, t);
          if constexpr (F::HAS_MIN) {
            t = fmaf(s0[r].y, (a.x + a.y) + (a.z + a.w), t);
            t = fmaf(s1[r].y, (bx.x + bx.y) + (bx.z + bx.w), t);
          }
          acc[m][r] = t;
        }
      }
    }
  });

#pragma unroll
  for (int m = 0; m < MT; ++m)
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
      float v = acc[m][r];
#pragma unroll
      for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xFFFFFFFFu, v, o);
      if (lane == 0) partial[warp][m][r] = v;
    }
  __syncthreads();
  if (threadIdx.x < MT * ROWS) {
    const int m = threadIdx.x / ROWS, r = threadIdx.x % ROWS;
    float v = 0.0f;
#pragma unroll
    for (int k = 0; k < WARPS; ++k) v += partial[k][m][r];
    if (m0 + m < M && row0 + r < N) store1(y + size_t(m0 + m) * N + row0 + r, v);
  }
}

template <class F, class T, int WARPS>
__device__ __forceinline__ void dequant(const uint8_t* w, T* out, int N, int row_bytes) {
  using C = Chunk<F>;
  __shared__ __align__(16) uint8_t stage[WARPS][C::SLOT];
  __shared__ float2 scales[WARPS][C::GROUPS];

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int nb = row_bytes / F::BB, K = nb * F::BE;
  const int nchunks = (nb + C::BLOCKS - 1) / C::BLOCKS;
  const long long job = (long long)blockIdx.x * WARPS + warp;
  if (job >= (long long)N * nchunks) return;  // whole warps only: no block-wide barrier below
  const int row = int(job / nchunks), c = int(job % nchunks);
  const int valid = min(C::BLOCKS, nb - c * C::BLOCKS);

  const uint8_t* src = w + size_t(row) * row_bytes + size_t(c) * C::BYTES;
  const uint8_t* blk = stage[warp] + stage_bytes(stage[warp], src, valid * F::BB, lane);
  cp_async_commit();
  cp_async_wait<0>();
  __syncwarp();
  decode_groups<F>(blk, valid, scales[warp], lane);
  __syncwarp();

  T* dst = out + size_t(row) * K + size_t(c) * CHUNK_ELEMS;
#pragma unroll
  for (int it = 0; it < C::ITEMS; ++it) {
    const int item = lane + 32 * it, b = item / F::P, p = item % F::P;
    if (b >= valid) continue;
    float q[8];
    F::piece(blk + b * F::BB, p, q);
    const float2 s0 = scales[warp][b * F::G + F::group_of(p, 0)];
    const float2 s1 = scales[warp][b * F::G + F::group_of(p, 1)];
    T* d = dst + b * F::BE;
    store4(d + F::elem_of(p, 0), fmaf(s0.x, q[0], s0.y), fmaf(s0.x, q[1], s0.y),
           fmaf(s0.x, q[2], s0.y), fmaf(s0.x, q[3], s0.y));
    store4(d + F::elem_of(p, 1), fmaf(s1.x, q[4], s1.y), fmaf(s1.x, q[5], s1.y),
           fmaf(s1.x, q[6], s1.y), fmaf(s1.x, q[7], s1.y));
  }
}

}  // namespace vx
