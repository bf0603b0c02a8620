// A few activation rows (2 to 16 in gguf_matmul, library.GEMM_ROWS: a batch of decoding
// requests, a draft's verification) times Q4_0 repacked in 1,024-element super-blocks
// (formats.h, Q4_0x1024), on the tensor cores.
//
// Why: those rows took the float matrix-vector kernel (kernels.cuh, four or eight rows a pass,
// issue-bound) or, from 16 rows, the whole matrix dequantized into bf16 and MLX's matmul (the
// weight's 4.5 bits a value read, 16 written, 16 read again). Here every weight byte is read
// once, into registers, and turned into the A operand of mma.sync.m16n8k16 (f32 accumulators),
// bf16 or f16 as x is: d * (q - 8) computed in float32 and rounded once, the value the
// dequantizing kernel writes, so both paths multiply the same weights. On the H200 (session
// 40, CUPTI) 8 rows of 28672x4096 take 43 us against the float kernel's 134, and 8 requests
// decode at 1,444 tok/s against 741.
//
// The weights are A (16 rows a tile) and x's rows B's 8 columns: D = W x^T, a tile of 16
// outputs of 8 activation rows. (Session 39's version had x as A: 16 activation rows, of which
// a batch of 8 filled half, against 8 weight rows; it made twice the mma and read x twice as
// often per weight byte, and took 68 us where this takes 43.)
//
// The order of k inside an mma is free as long as A and B agree, and this kernel picks the one
// in which each lane's operands are whole words it loads itself, nothing shuffled: lane
// (g, t) = (lane / 4, lane % 4) of a warp holds, for weight rows g and g + 8 of its 16-row tile,
// block 4i + t of each round i of four blocks (a row's 16 quant bytes in one 16-byte load, 4
// lanes a row reading 64 contiguous bytes), and step s (0..7) of the round gives the mma's k
// slots 2t, 2t+1 to the block's elements 4s, 4s+1 and slots 2t+8, 2t+9 to 4s+2, 4s+3: the low
// nibbles of quant word s for s < 4, the high ones of word s - 4 after. The B operand for the
// same slots is then x's values 32 (4i + t) + 4s .. + 3 of row g: 8 contiguous bytes, so a lane
// reads its block's 64 bytes of x in four 16-byte loads (through L1, where every warp of the
// CTA finds the same rows).
//
// A CTA is WN x WK warps. The grid is R x ceil(M / MT) CTAs, R = ceil(N / (16 NT WN)): warp
// (wn, wk) = (w % WN, w / WN) of CTA c owns weight rows 16 NT ((c % R) WN + wn) .. + 16 NT (NT
// tiles of 16), activation rows MT (c / R) .. + MT (MT / 8 tiles of 8), and the rounds
// wk, wk + WK, ... of K; the WK warps of the same rows add their sums through shared memory,
// in a fixed order. Each lane keeps AHEAD rounds of its weight words in flight and the next
// round's x: a round's loads wait on nothing computed. Rows past N or M are read clamped and
// never stored. (Session 39's first version, one warp a row tile over all of K and x loaded as
// each round began, took 26 us at two rows of 4096x4096 where the float kernel takes 11:
// four warps an SM, each waiting on x's L2 round trip every round.)

namespace vx {

#ifdef __CUDACC__  // nvcc and NVRTC (both passes); the emulation is g++
__device__ __forceinline__ uint32_t pack_pair(float a, float b, const __nv_bfloat16*) {
  const __nv_bfloat162 v = __floats2bfloat162_rn(a, b);
  return *reinterpret_cast<const uint32_t*>(&v);
}
__device__ __forceinline__ uint32_t pack_pair(float a, float b, const __half*) {
  const __half2 v = __floats2half2_rn(a, b);
  return *reinterpret_cast<const uint32_t*>(&v);
}
// D = A B + D for one m16n8k16 tile (PTX's fragment layout: A rows g and g + 8, k 2t.. and
// 2t + 8..; B k 2t.. and 2t + 8.., column g; D rows g, g + 8, columns 2t, 2t + 1).
__device__ __forceinline__ void mma_16816(float (&d)[4], const uint32_t (&a)[4],
                                          const uint32_t (&b)[2], const __nv_bfloat16*) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
__device__ __forceinline__ void mma_16816(float (&d)[4], const uint32_t (&a)[4],
                                          const uint32_t (&b)[2], const __half*) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
#else  // the CPU emulation (tests/kernel_emulation): the same values, the operands gathered
inline uint32_t pack_pair(float a, float b, const __nv_bfloat16*) {
  return uint32_t(float_to_bf16(a)) | (uint32_t(float_to_bf16(b)) << 16);
}
inline uint32_t pack_pair(float a, float b, const __half*) {
  return uint32_t(float_to_f16(a)) | (uint32_t(float_to_f16(b)) << 16);
}
inline float element_of(uint32_t pair, int half, const __nv_bfloat16*) {
  return __uint_as_float(((pair >> (16 * half)) & 0xFFFFu) << 16);
}
inline float element_of(uint32_t pair, int half, const __half*) {
  return __half2float(__ushort_as_half(static_cast<unsigned short>(pair >> (16 * half))));
}
template <class T>
inline void mma_16816(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2],
                      const T* tag) {
  uint32_t all_a[4][32], all_b[2][32];
  for (int r = 0; r < 4; ++r) warp_gather(a[r], all_a[r]);
  for (int r = 0; r < 2; ++r) warp_gather(b[r], all_b[r]);
  const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  for (int k = 0; k < 16; ++k) {
    const int src = (k & 7) >> 1, half = k & 1, hi = k >> 3;  // who holds slot k, and where
    const float a_g = element_of(all_a[2 * hi][4 * g + src], half, tag);
    const float a_g8 = element_of(all_a[2 * hi + 1][4 * g + src], half, tag);
    const float b0 = element_of(all_b[hi][4 * (2 * t) + src], half, tag);
    const float b1 = element_of(all_b[hi][4 * (2 * t + 1) + src], half, tag);
    d[0] = fmaf(a_g, b0, d[0]);
    d[1] = fmaf(a_g, b1, d[1]);
    d[2] = fmaf(a_g8, b0, d[2]);
    d[3] = fmaf(a_g8, b1, d[3]);
  }
}
#endif

// Four nibbles (bytes of n, each 0..15) minus 8, times d, as two pairs of a row's operand: k
// slots 2t, 2t + 1 and 2t + 8, 2t + 9.
template <class T>
__device__ __forceinline__ void weight_pairs(uint32_t n, float d, uint32_t (&b)[2]) {
  constexpr float MAGIC = 8388616.0f;  // 2^23 + 8: 0x4B0000vv as a float is 2^23 + v
  const float v0 = __uint_as_float(__byte_perm(n, 0x4B000000u, 0x7440)) - MAGIC;
  const float v1 = __uint_as_float(__byte_perm(n, 0x4B000000u, 0x7441)) - MAGIC;
  const float v2 = __uint_as_float(__byte_perm(n, 0x4B000000u, 0x7442)) - MAGIC;
  const float v3 = __uint_as_float(__byte_perm(n, 0x4B000000u, 0x7443)) - MAGIC;
  b[0] = pack_pair(d * v0, d * v1, static_cast<const T*>(nullptr));
  b[1] = pack_pair(d * v2, d * v3, static_cast<const T*>(nullptr));
}

// The sums of a CTA's WK k-slices (warps wk = 0 .. WK - 1 of each of its WN row warps), added
// through shared memory in a fixed order: afterwards warp (wn, 0) holds its rows' totals in
// acc[0 .. VALS) and gets true; the other slices get false and are done.
template <int WN, int WK, int VALS>
__device__ __forceinline__ bool sum_k_slices(float* acc, int wn, int wk, int lane) {
  if constexpr (WK > 1) {
    __shared__ float part[WK - 1][WN][VALS][32];
    if (wk > 0) {
#pragma unroll
      for (int v = 0; v < VALS; ++v) part[wk - 1][wn][v][lane] = acc[v];
    }
    __syncthreads();
    if (wk > 0) return false;
#pragma unroll
    for (int v = 0; v < VALS; ++v) {
      for (int k = 0; k < WK - 1; ++k) acc[v] += part[k][wn][v][lane];
    }
  }
  return true;
}

template <class T, int WN, int WK, int NT, int MT, int AHEAD, int ACT>
__device__ __forceinline__ void gemm_packed(const uint8_t* w, const T* x, T* y, int N,
                                            int row_bytes, int M) {
  // Gated (ACT 1: SiLU, 2: GELU tanh): W holds F = N / 2 gate rows, then F up rows; a warp's NT
  // gate tiles come with the NT up tiles F rows further, and y [M, F] is act(g) * u rounded as
  // gemv_int8's gated mode rounds it (glu). Plain: NT tiles of N rows.
  constexpr int MTILES = MT / 8, TILES = ACT ? 2 * NT : NT;
  const int outs = ACT ? N / 2 : N;
  static_assert(MT % 8 == 0 && MTILES >= 1, "MT: whole tiles of 8 rows");
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
  const int wn = warp % WN, wk = warp / WN;
  const int K = row_bytes / 576 * 1024, rounds = K / 128;
  // CTA c: weight-row group c % row_ctas, activation-row group c / row_ctas
  const int row_ctas = (outs + 16 * NT * WN - 1) / (16 * NT * WN), c = int(blockIdx.x);
  const int n0 = ((c % row_ctas) * WN + wn) * 16 * NT, m0 = (c / row_ctas) * MT;

  const uint8_t* wrow[TILES][2];  // this lane's weight rows g, g + 8 of each tile (clamped)
#pragma unroll
  for (int j = 0; j < TILES; ++j) {
    const int half = j < NT ? 0 : outs;  // the up tiles' rows: F further
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      wrow[j][h] = w + size_t(half + min(n0 + 16 * (j % NT) + g + 8 * h, outs - 1)) * row_bytes;
    }
  }
  const T* xrow[MTILES];  // this lane's x row g of each tile of 8 (clamped: never stored)
#pragma unroll
  for (int i = 0; i < MTILES; ++i) xrow[i] = x + size_t(min(m0 + 8 * i + g, M - 1)) * K;
  // This warp's rounds: wk, wk + WK, ... (a round r of a row is super-block r / 8, blocks
  // 4 (r % 8) .. + 3, of which this lane's is + t; x's values 128 r + 32 t .. + 31 go with it)
  const int mine = rounds > wk ? (rounds - 1 - wk) / WK + 1 : 0;
  auto load_round = [&](int i, uint4 (&q)[TILES][2], uint32_t (&d)[TILES][2]) {
    const int r = wk + i * WK;
#pragma unroll
    for (int j = 0; j < TILES; ++j) {  // gemv_packed.cuh's loads: weights past L1, x through it
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        load_packed(wrow[j][h] + (r >> 3) * 576, 4 * (r & 7) + t, q[j][h], d[j][h]);
      }
    }
  };
  auto load_x = [&](int i, uint4 (&xs)[MTILES][4]) {
    const int k0 = 128 * (wk + i * WK) + 32 * t;
#pragma unroll
    for (int m = 0; m < MTILES; ++m) {
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        xs[m][u] = __ldg(reinterpret_cast<const uint4*>(xrow[m] + k0) + u);
      }
    }
  };
  uint4 q[AHEAD][TILES][2];
  uint32_t dq[AHEAD][TILES][2];
#pragma unroll
  for (int a = 0; a < AHEAD; ++a) {
    if (a < mine) load_round(a, q[a], dq[a]);
  }
  uint4 xn[MTILES][4];  // the next round's x, asked for a round ahead
  if (mine > 0) load_x(0, xn);

  // two accumulators a tile, the round's even and odd steps: two chains of four dependent mma
  // where one accumulator made one of eight
  float acc[MTILES][TILES][4] = {}, odd[MTILES][TILES][4] = {};
  for (int i0 = 0; i0 < mine; i0 += AHEAD) {
#pragma unroll
    for (int a = 0; a < AHEAD; ++a) {
      const int i = i0 + a;
      if (i >= mine) break;
      uint4 qs[TILES][2];
      float d[TILES][2];
#pragma unroll
      for (int j = 0; j < TILES; ++j) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          qs[j][h] = q[a][j][h];
          d[j][h] = half_to_float(dq[a][j][h]);
        }
      }
      if (i + AHEAD < mine) load_round(i + AHEAD, q[a], dq[a]);  // refill the slot taken
      uint4 xs[MTILES][4];
#pragma unroll
      for (int m = 0; m < MTILES; ++m) {
#pragma unroll
        for (int u = 0; u < 4; ++u) xs[m][u] = xn[m][u];
      }
      if (i + 1 < mine) load_x(i + 1, xn);
#pragma unroll
      for (int s = 0; s < 8; ++s) {
        // step s's A operand of every tile: rows g and g + 8, k slots 2t.. then 2t + 8..
        uint32_t a4[TILES][4];
#pragma unroll
        for (int j = 0; j < TILES; ++j) {
          uint32_t b[2][2];
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const uint32_t words[4] = {qs[j][h].x, qs[j][h].y, qs[j][h].z, qs[j][h].w};
            const uint32_t n = s < 4 ? words[s] & 0x0F0F0F0Fu : (words[s - 4] >> 4) & 0x0F0F0F0Fu;
            weight_pairs<T>(n, d[j][h], b[h]);
          }
          a4[j][0] = b[0][0];
          a4[j][1] = b[1][0];
          a4[j][2] = b[0][1];
          a4[j][3] = b[1][1];
        }
#pragma unroll
        for (int m = 0; m < MTILES; ++m) {
          const uint4 v = xs[m][s >> 1];
          const uint32_t b2[2] = {(s & 1) ? v.z : v.x, (s & 1) ? v.w : v.y};
#pragma unroll
          for (int j = 0; j < TILES; ++j) mma_16816(s & 1 ? odd[m][j] : acc[m][j], a4[j], b2, x);
        }
      }
    }
  }

#pragma unroll
  for (int v = 0; v < MTILES * TILES * 4; ++v) (&acc[0][0][0])[v] += (&odd[0][0][0])[v];
  if (!sum_k_slices<WN, WK, MTILES * TILES * 4>(&acc[0][0][0], wn, wk, lane)) return;
  // D's rows are weight rows g and g + 8 of each (gate) tile, its columns x's rows 2t, 2t + 1
#pragma unroll
  for (int m = 0; m < MTILES; ++m) {
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const int row = m0 + 8 * m + 2 * t + e;
      if (row >= M) continue;
#pragma unroll
      for (int j = 0; j < NT; ++j) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int col = n0 + 16 * j + g + 8 * h;
          if (col >= outs) continue;
          const float v = acc[m][j][2 * h + e];
          if constexpr (ACT == 0) {
            store1(y + size_t(row) * outs + col, v);
          } else {
            y[size_t(row) * outs + col] =
                glu<ACT>(rounded<T>(v), rounded<T>(acc[m][NT + j][2 * h + e]));
          }
        }
      }
    }
  }
}

}  // namespace vx
