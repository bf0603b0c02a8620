// One activation row of Q4_0 repacked in 1,024-element super-blocks (formats.h, Q4_0x1024:
// 32 blocks' 16-byte quants, then their 32 scales), on x rounded beforehand (round_x: xq, xd,
// xsum): the structure that session 13's probe (benchmarks/q4_0_ablation.cu) timed at 11.8 us
// for 14336x4096, 73% of the copy bandwidth, against gemv_int8's 13.8 on the file's blocks.
//
// Why not gemv_int8: that kernel stages each chunk into shared memory and rounds x in every
// CTA. Here nothing is staged. Lane l reads block l of each super-block straight from global
// memory (one 16-byte load: a warp's load instruction covers 512 contiguous bytes, and one
// 2-byte load of d: 64 contiguous bytes), PASS super-blocks a pass, all of a pass's loads
// issued before its first product. The loads are coherent (ld.global, not .nc) and a
// __syncwarp follows them: ptxas moves neither across the barrier, so every load of the pass
// is in flight at once; without it ptxas issued each block's load after the previous block's
// products, about one load in flight a lane (SASS, session 12). x's rounded copy is read
// through L1, where every warp of an SM finds the same 5 KB.
//
// Warp w of the grid owns outputs w, w + W, ... (W warps in all). Gated (ACT 1: SiLU, 2: GELU
// tanh): W holds gate rows then up rows, and output i is act(W[i].x) * W[i + N/2].x, rounded as
// gemv_int8's gated mode rounds it (glu).

namespace vx {

// A super-block's 16-byte quant word for this lane and its block's d, loaded so that they stay
// ahead of the fence (see the top of this file).
__device__ __forceinline__ void load_packed(const uint8_t* sb, int lane, uint4& q, uint32_t& d) {
#ifdef __CUDA_ARCH__
  unsigned short h;
  asm volatile("ld.global.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(q.x), "=r"(q.y), "=r"(q.z), "=r"(q.w) : "l"(sb + 16 * lane));
  asm volatile("ld.global.L1::no_allocate.u16 %0, [%1];" : "=h"(h) : "l"(sb + 512 + 2 * lane));
  d = h;
#else  // the CPU emulation (tests/kernel_emulation)
  q = *reinterpret_cast<const uint4*>(sb + 16 * lane);
  d = *reinterpret_cast<const uint16_t*>(sb + 512 + 2 * lane);
#endif
}

// PASS super-blocks of a row from super-block s0 (CHECKED: some may lie past the row's nsb),
// added to acc.
template <int PASS, bool CHECKED>
__device__ __forceinline__ float packed_pass(const uint8_t* row, int s0, int nsb,
                                             const int8_t* xq, const float* xd, const int* xs,
                                             int lane, float acc) {
  uint4 q[PASS];
  uint32_t d[PASS];
#pragma unroll
  for (int k = 0; k < PASS; ++k) {
    if (!CHECKED || s0 + k < nsb) load_packed(row + (s0 + k) * 576, lane, q[k], d[k]);
  }
  __syncwarp();  // the fence: every load above is issued before the products below
#pragma unroll
  for (int k = 0; k < PASS; ++k) {
    if (CHECKED && s0 + k >= nsb) break;
    const int b = 32 * (s0 + k) + lane;  // x's 32-element block, the weight block's columns
    const uint4 xa = reinterpret_cast<const uint4*>(xq + 32 * b)[0];
    const uint4 xb = reinterpret_cast<const uint4*>(xq + 32 * b)[1];
    // nibbles in place (the high ones 16 times their value), "minus 8" as -8 times x's
    // block sum: gemv_int8's Q4_0 arithmetic (Int8Format<2>::dot), the same integer
    int lo = dp4a_us(int(q[k].x & 0x0F0F0F0Fu), int(xa.x), -8 * xs[b]);
    lo = dp4a_us(int(q[k].y & 0x0F0F0F0Fu), int(xa.y), lo);
    lo = dp4a_us(int(q[k].z & 0x0F0F0F0Fu), int(xa.z), lo);
    lo = dp4a_us(int(q[k].w & 0x0F0F0F0Fu), int(xa.w), lo);
    int hi = dp4a_us(int(q[k].x & 0xF0F0F0F0u), int(xb.x), 0);
    hi = dp4a_us(int(q[k].y & 0xF0F0F0F0u), int(xb.y), hi);
    hi = dp4a_us(int(q[k].z & 0xF0F0F0F0u), int(xb.z), hi);
    hi = dp4a_us(int(q[k].w & 0xF0F0F0F0u), int(xb.w), hi);
    acc = fmaf(xd[b], half_to_float(d[k]) * float(lo + (hi >> 4)), acc);
  }
  return acc;
}

// One row's dot product with x (every lane holds the sum after the reduction): whole passes,
// then the rest (rows of 4,096 columns with PASS 4: one pass, no checks).
template <int PASS>
__device__ __forceinline__ float packed_row(const uint8_t* row, int nsb, const int8_t* xq,
                                            const float* xd, const int* xs, int lane) {
  float acc = 0.0f;
  int s0 = 0;
  for (; s0 + PASS <= nsb; s0 += PASS) acc = packed_pass<PASS, false>(row, s0, nsb, xq, xd, xs, lane, acc);
  if (s0 < nsb) acc = packed_pass<PASS, true>(row, s0, nsb, xq, xd, xs, lane, acc);
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xFFFFFFFFu, acc, o);
  return acc;
}

// ACT 0: y[N] = W x. ACT 1 or 2: y[N / 2] = act(g) * u. xr: round_x's buffer for K = 1024 nsb
// columns (xq[K] int8, xd[K / 32] float32, xsum[K / 32] int32).
template <class T, int WARPS, int PASS, int ACT>
__device__ __forceinline__ void gemv_packed(const uint8_t* w, const uint8_t* xr, T* y, int N,
                                            int row_bytes) {
  const int lane = threadIdx.x & 31;
  const int nsb = row_bytes / 576, k = nsb * 1024;
  const int8_t* xq = reinterpret_cast<const int8_t*>(xr);
  const float* xd = reinterpret_cast<const float*>(xr + k);
  const int* xs = reinterpret_cast<const int*>(xr + k + 4 * (k / 32));
  const int outs = ACT ? N / 2 : N;
  const int all = int(gridDim.x) * WARPS;
  for (int o = int(blockIdx.x) * WARPS + (threadIdx.x >> 5); o < outs; o += all) {
    const float v = packed_row<PASS>(w + size_t(o) * row_bytes, nsb, xq, xd, xs, lane);
    if constexpr (ACT == 0) {
      if (lane == 0) store1(y + o, v);
    } else {
      const float u =
          packed_row<PASS>(w + size_t(o + outs) * row_bytes, nsb, xq, xd, xs, lane);
      if (lane == 0) y[o] = glu<ACT>(rounded<T>(v), rounded<T>(u));
    }
  }
}

}  // namespace vx
