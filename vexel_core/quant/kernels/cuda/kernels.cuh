// The two GGUF kernels for CUDA, generic over the formats of common/formats.h.
//
// Both read the file's blocks as they are (no repacked copy): a warp stages a chunk of
// CHUNK_ELEMS elements of a weight row into shared memory with 16-byte asynchronous copies of
// the aligned words that cover it (GGUF blocks are 18, 20, ... 210 bytes, so rows are not
// 16-byte aligned in general), then decodes it from there. Each lane decodes ITEMS pieces of
// 8 elements per row; the (scale, min) of every group in the chunk is decoded once into
// shared memory first and shared by the pieces that use it.
//
// quantize: x as int8 for gemv, as llama.cpp's quantize_q8_1: each 32-element block of x gets
//          the scale d = max|x| / 127 and q = rint(x / d), so that gemv multiplies with 8-bit
//          dot products (dp4a: four products an instruction, the weights' integers never
//          become floats). The price is x's rounding, |x - d * q| <= d / 2 per element.
//          One launch per product: done inside gemv, every CTA repeated it for the whole of
//          x, which made the kernel latency-bound (notes/gpu-kernels.md, session 3).
// gemv:    y[m, n] = sum_k x[m, k] * W[n, k] for few activation rows (decode), from quantize's
//          output. Per piece and weight row: two dp4a, then
//          d * (scale * dot + (min - OFF * scale) * sum(q)). A CTA of WARPS warps owns ROWS
//          weight rows and MT activation rows; its warps split the row's chunks (warp w takes
//          chunks w, w + WARPS, ...) with STAGES copies in flight, each lane accumulates
//          MT x ROWS sums in registers, and the CTA reduces them at the end (shuffles, then
//          shared memory). More than MT activation rows: the grid repeats the row block per
//          group of MT activation rows, neighbouring CTAs reading the same weights so that
//          the repeats hit L2.
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

// Decode the (scale, min) of every group of the valid blocks of one staged chunk; with BIAS,
// (scale, min - OFF * scale), the form the integer dot products need.
template <class F, bool BIAS = false>
__device__ __forceinline__ void decode_groups(const uint8_t* blocks, int valid, float2* out,
                                              int lane) {
  for (int k = lane; k < Chunk<F>::GROUPS; k += 32) {
    const int b = k / F::G;
    if (b >= valid) continue;
    const float2 g = F::group(blocks + b * F::BB, k % F::G);
    out[k] = BIAS ? make_float2(g.x, fmaf(-float(F::OFF), g.x, g.y)) : g;
  }
}

// Thread t quantizes the 32-element block t of x ([M, K] row-major, K a multiple of 32) into
// xq (4 values a word) and xd. q = rint(x * 127 / amax) comes from one FMA with 1.5 * 2^23
// (the integer lands in the low mantissa bits, rounded to nearest even); both divisions are
// IEEE-rounded so that tests can repeat them exactly.
template <class T>
__device__ __forceinline__ void quantize(const T* x, uint32_t* xq, float* xd, int blocks) {
  const int t = int(blockIdx.x * blockDim.x + threadIdx.x);
  if (t >= blocks) return;
  const T* src = x + size_t(t) * 32;
  float4 v[8];
  float amax = 0.0f;
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    v[j] = load4(src + 4 * j);
    amax = fmaxf(amax, fmaxf(fmaxf(fabsf(v[j].x), fabsf(v[j].y)),
                             fmaxf(fabsf(v[j].z), fabsf(v[j].w))));
  }
  const float inv = amax > 0.0f ? __fdiv_rn(127.0f, amax) : 0.0f;
  xd[t] = __fdiv_rn(amax, 127.0f);
  uint32_t words[8];
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    const uint32_t a = __float_as_uint(fmaf(v[j].x, inv, 12582912.0f));
    const uint32_t b = __float_as_uint(fmaf(v[j].y, inv, 12582912.0f));
    const uint32_t c = __float_as_uint(fmaf(v[j].z, inv, 12582912.0f));
    const uint32_t d = __float_as_uint(fmaf(v[j].w, inv, 12582912.0f));
    words[j] = __byte_perm(__byte_perm(a, b, 0x0040), __byte_perm(c, d, 0x0040), 0x5410);
  }
  uint4* dst = reinterpret_cast<uint4*>(xq + size_t(t) * 8);
  dst[0] = make_uint4(words[0], words[1], words[2], words[3]);
  dst[1] = make_uint4(words[4], words[5], words[6], words[7]);
}

template <class F, class T, int MT, int ROWS, int WARPS, int STAGES>
__device__ __forceinline__ void gemv(const uint8_t* w, const uint32_t* xq, const float* xd, T* y,
                                     int N, int row_bytes, int M) {
  using C = Chunk<F>;
  // Both runs of a piece in one scale group and one 32-element block of x: one conversion.
  constexpr bool ONE_GROUP = F::BE == 32;
  constexpr bool BIASED = F::HAS_MIN || F::OFF != 0;
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

#pragma unroll
  for (int i = 0; i < STAGES - 1; ++i) {
    if (i < mine) issue(i);
    cp_async_commit();
  }
  for (int i = 0; i < mine; ++i) {
    if (i + STAGES - 1 < mine) issue(i + STAGES - 1);
    cp_async_commit();
    cp_async_wait<STAGES - 1>();
    __syncwarp();

    const int c = warp + i * WARPS;
    const int valid = min(C::BLOCKS, nb - c * C::BLOCKS);
    const uint8_t* blk[ROWS];
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
      blk[r] = stage[warp][i % STAGES][r] + (reinterpret_cast<uintptr_t>(chunk_src(r, c)) & 15);
      decode_groups<F, true>(blk[r], valid, scales[warp][r], lane);
    }
    __syncwarp();

#pragma unroll
    for (int it = 0; it < C::ITEMS; ++it) {
      const int item = lane + 32 * it, b = item / F::P, p = item % F::P;
      if (b >= valid) continue;
      uint32_t u[ROWS][2];
      float2 s0[ROWS], s1[ROWS];
      const int g0 = b * F::G + F::group_of(p, 0), g1 = b * F::G + F::group_of(p, 1);
#pragma unroll
      for (int r = 0; r < ROWS; ++r) {
        F::words(blk[r] + b * F::BB, p, u[r]);
        s0[r] = scales[warp][r][g0];
        s1[r] = scales[warp][r][g1];
      }
      const int e = c * CHUNK_ELEMS + b * F::BE;
      const int e0 = e + F::elem_of(p, 0), e1 = e + F::elem_of(p, 1);
#pragma unroll
      for (int m = 0; m < MT; ++m) {
        if (m0 + m >= M) break;
        const uint32_t* qm = xq + size_t(m0 + m) * (K / 4);
        const float* dm = xd + size_t(m0 + m) * (K / 32);
        const int a0 = int(__ldg(qm + (e0 >> 2))), a1 = int(__ldg(qm + (e1 >> 2)));
        const float d0 = __ldg(dm + (e0 >> 5));
        if constexpr (ONE_GROUP) {
          const float sx = BIASED ? float(__dp4a(a1, 0x01010101, __dp4a(a0, 0x01010101, 0))) : 0.0f;
#pragma unroll
          for (int r = 0; r < ROWS; ++r) {
            const int dot = __dp4a(int(u[r][1]), a1, __dp4a(int(u[r][0]), a0, 0));
            float t = s0[r].x * float(dot);
            if constexpr (BIASED) t = fmaf(s0[r].y, sx, t);
            acc[m][r] = fmaf(d0, t, acc[m][r]);
          }
        } else {
          const float d1 = __ldg(dm + (e1 >> 5));
          const float sx0 = BIASED ? float(__dp4a(a0, 0x01010101, 0)) : 0.0f;
          const float sx1 = BIASED ? float(__dp4a(a1, 0x01010101, 0)) : 0.0f;
#pragma unroll
          for (int r = 0; r < ROWS; ++r) {
            float t0 = s0[r].x * float(__dp4a(int(u[r][0]), a0, 0));
            float t1 = s1[r].x * float(__dp4a(int(u[r][1]), a1, 0));
            if constexpr (BIASED) {
              t0 = fmaf(s0[r].y, sx0, t0);
              t1 = fmaf(s1[r].y, sx1, t1);
            }
            acc[m][r] = fmaf(d1, t1, fmaf(d0, t0, acc[m][r]));
          }
        }
      }
    }
    __syncwarp();  // the next issue overwrites this stage
  }

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
