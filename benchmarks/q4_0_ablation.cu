// Body of the kernels behind benchmarks/q4_0_ablation.py: the packed Q4_0 prototype's access
// pattern (branch next/packed-q4_0: qs [N, nb, 16], one 16-byte word a block; warp w takes rows
// w, w + W, ...; lane l words l, l + 32, ... of a row, all LOADS of a row issued together; a
// row is one pass, nb == 32 LOADS), with the work after the loads chosen by template switches:
//   WORK  0: the loads alone, folded by XOR (the floor of this access pattern)
//         1: + Q4_0's nibbles times x's int8 (dp4a), summed as integers
//         2: + the block scales d (float16, one 2-byte load a block) and x's: y = sum d dx dot
//   XSRC  where x's rounded copy (xq, xd, xs) is read from: 0 global memory (L1);
//         1 shared memory, copied there by each CTA first (a barrier, no rounding);
//         2 registers, a lane's LOADS blocks loaded once for all its rows;
//         3 shared memory, rounded from the bfloat16 x by each CTA (a naive prologue: a thread
//           rounds a whole block), after an L2 prefetch of each warp's first row
//         4 shared memory, rounded from the bfloat16 x by each CTA cooperatively (four lanes
//           a block, eight values each, amax and sum by shuffles, gemv_int8's arithmetic)
//           while each warp's first row's loads are in flight (PIPE 0 only)
//   PIPE  1: the next row's loads are issued before this row's products (twice the registers
//         for the weights); 0: a row's loads, then its products; 2 (XSRC 4): as 0, and
//         the warp's second row is requested into L2 before x is rounded (no registers)
//   SUMS  1: the nibbles' offset of 8 taken once a block from x's block sum xs (as llama.cpp's
//         q8_1 carries it) instead of a byte subtraction per word
//   LAYOUT 0: the packed layout above; 1: the file's own 18-byte blocks (raw, nb even, so
//         that rows start on 4 bytes): a block is 2-byte aligned, so a lane loads the five
//         4-byte words that cover it, through L1 (the warp's loads of a word overlap), and
//         takes d and the quants out of them with funnel shifts: no repacking, no staging.
//         Lane l's blocks all have l's parity, so the shifts are the same for all of them.
//   FENCE 1: a __syncwarp after a row's loads are issued (coherent volatile loads, which
//         stay before it), so that ptxas issues them all before the first product. Without it, ptxas
//         interleaves the loads with the products to save registers (seen in the SASS of
//         WORK 1 and 2: block k + 1's load after block k's dp4a), which leaves about one load
//         a lane in flight; WORK 0 needs no fence (its XOR needs no registers).
// Inputs: qs uint32 [N, nb, 4]; d float16 [N, nb]; xq int8 [32 nb]; xd float32 [nb]; x
// bfloat16 [32 nb] (XSRC 3); xs int32 [nb]; raw uint32 [N, 18 nb / 4] (the same blocks as the
// file stores them). Output y float32 [N]: WORK 0 the fold's bits, 1 the integer dot, 2 the
// product.
constexpr int KMAX = 4096;  // columns at most (shared memory of XSRC 1, 3)
const int N = qs_shape[0], nb = qs_shape[1];
const int lane = threadIdx.x & 31;
const int warps = int(gridDim.x) * (blockDim.x / 32);
const int first = int(blockIdx.x) * (blockDim.x / 32) + (threadIdx.x >> 5);
const uint4* words = reinterpret_cast<const uint4*>(qs);

constexpr bool SHARED_X = XSRC == 1 || XSRC == 3 || XSRC == 4;
static_assert(XSRC != 4 || PIPE != 1, "XSRC 4 issues the first row's loads itself");
static_assert(PIPE != 2 || XSRC == 4, "PIPE 2 prefetches during the rounding of XSRC 4");
__shared__ __align__(16) int8_t s_xq[SHARED_X ? KMAX : 16];
__shared__ float s_xd[SHARED_X ? KMAX / 32 : 1];
__shared__ int s_xs[SHARED_X ? KMAX / 32 : 1];
if constexpr (XSRC == 1) {
  for (int i = threadIdx.x; i < 2 * nb; i += blockDim.x) {
    reinterpret_cast<uint4*>(s_xq)[i] = reinterpret_cast<const uint4*>(xq)[i];
  }
  for (int b = threadIdx.x; b < nb; b += blockDim.x) s_xd[b] = xd[b], s_xs[b] = xs[b];
  __syncthreads();
} else if constexpr (XSRC == 3) {
  if (first < N) {
    for (int k = 0; k < LOADS; ++k) {
      asm volatile("prefetch.global.L2 [%0];" ::"l"(words + size_t(first) * nb + lane + 32 * k));
    }
  }
  // as quantize_q8_1: dx = max|x| / 127, q = rint(x / dx)
  for (int b = threadIdx.x; b < nb; b += blockDim.x) {
    float v[32], amax = 0.0f;
    for (int i = 0; i < 32; ++i) {
      v[i] = float(x[32 * b + i]);
      amax = fmaxf(amax, fabsf(v[i]));
    }
    const float dx = amax / 127.0f;
    int sum = 0;
    for (int i = 0; i < 32; ++i) {
      const int q = dx > 0.0f ? int(rintf(v[i] / dx)) : 0;
      s_xq[32 * b + i] = int8_t(q);
      sum += q;
    }
    s_xd[b] = dx, s_xs[b] = sum;
  }
  __syncthreads();
}
const int8_t* xq_at = SHARED_X ? s_xq : reinterpret_cast<const int8_t*>(xq);
const float* xd_at = SHARED_X ? s_xd : xd;
const int* xs_at = SHARED_X ? s_xs : xs;

// XSRC 2: a lane's blocks of x, the same for every row
uint4 xr[XSRC == 2 ? LOADS : 1][2];
float xdr[XSRC == 2 ? LOADS : 1];
int xsr[XSRC == 2 ? LOADS : 1];
if constexpr (XSRC == 2) {
#pragma unroll
  for (int k = 0; k < LOADS; ++k) {
    const int b = lane + 32 * k;
    xr[k][0] = reinterpret_cast<const uint4*>(xq_at + 32 * b)[0];
    xr[k][1] = reinterpret_cast<const uint4*>(xq_at + 32 * b)[1];
    xdr[k] = xd_at[b], xsr[k] = xs_at[b];
  }
}

// A row's loads as they arrive, used only in the compute phase (so that all are in flight
// first): LAYOUT 0 the four words of a block's quants, then its d's 16 bits (WORK 2); LAYOUT 1
// the five file words that cover the block.
using Loaded = uint32_t[LOADS][5];
auto load_row = [&](Loaded& r, int row) {
#pragma unroll
  for (int k = 0; k < LOADS; ++k) {
    const int b = lane + 32 * k;
    if constexpr (LAYOUT == 0) {
      const uint4* p = words + size_t(row) * nb + b;
      const auto* pd = d + size_t(row) * nb + b;
      unsigned short h = 0;
      if constexpr (FENCE) {
        // coherent loads (not .nc): ptxas moves read-only ones past the fence
        asm volatile("ld.global.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
                     : "=r"(r[k][0]), "=r"(r[k][1]), "=r"(r[k][2]), "=r"(r[k][3]) : "l"(p));
        if (WORK >= 2) asm volatile("ld.global.L1::no_allocate.u16 %0, [%1];" : "=h"(h) : "l"(pd));
      } else {
        asm("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
            : "=r"(r[k][0]), "=r"(r[k][1]), "=r"(r[k][2]), "=r"(r[k][3]) : "l"(p));
        if (WORK >= 2) asm("ld.global.nc.L1::no_allocate.u16 %0, [%1];" : "=h"(h) : "l"(pd));
      }
      r[k][4] = h;
    } else {
      const uint32_t* p = raw + (size_t(row) * nb * 18 + 18 * b) / 4;  // the block's 4-byte floor
#pragma unroll
      for (int j = 0; j < 5; ++j) r[k][j] = p[j];
    }
  }
};
// Block k's quants (as the packed layout's four words) and its d, from what load_row left.
auto block = [&](const Loaded& r, int k, uint32_t (&q)[4], float& dw) {
  uint32_t bits;
  if constexpr (LAYOUT == 0) {
#pragma unroll
    for (int i = 0; i < 4; ++i) q[i] = r[k][i];
    bits = r[k][4];
  } else {  // an even block starts its floor word with d; an odd one ends it with d
    const bool odd = lane & 1;
#pragma unroll
    for (int i = 0; i < 4; ++i) q[i] = __funnelshift_rc(r[k][i], r[k][i + 1], odd ? 32 : 16);
    bits = odd ? r[k][0] >> 16 : r[k][0] & 0xFFFFu;
  }
  dw = __half2float(__ushort_as_half((unsigned short)bits));
};

Loaded now, next;
if (PIPE == 1 && first < N) load_row(next, first);
if constexpr (XSRC == 4) {
  if (first < N) load_row(now, first);  // in flight during the rounding
  if (PIPE == 2 && first + warps < N) {
    const int row = first + warps;
#pragma unroll
    for (int k = 0; k < LOADS; ++k) {
      const int b = lane + 32 * k;
      const void* at = LAYOUT == 0 ? static_cast<const void*>(words + size_t(row) * nb + b)
                                   : static_cast<const void*>(raw + (size_t(row) * nb * 18 + 18 * b) / 4);
      asm volatile("prefetch.global.L2 [%0];" ::"l"(at));
      if (LAYOUT == 0 && WORK >= 2) asm volatile("prefetch.global.L2 [%0];" ::"l"(d + size_t(row) * nb + b));
    }
  }
  // lanes 4i..4i+3 round x's block i: eight values each (one 16-byte load). 4 nb threads in
  // all, a multiple of 32 (nb is), so every warp that enters the loop is whole: full masks.
  for (int t = threadIdx.x; t < 4 * nb; t += blockDim.x) {
    const int b = t >> 2;
    const uint4 raw8 = reinterpret_cast<const uint4*>(x)[t];
    const uint32_t h[4] = {raw8.x, raw8.y, raw8.z, raw8.w};
    float v[8], amax = 0.0f;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      v[2 * i] = __uint_as_float(h[i] << 16), v[2 * i + 1] = __uint_as_float(h[i] & 0xFFFF0000u);
      amax = fmaxf(amax, fmaxf(fabsf(v[2 * i]), fabsf(v[2 * i + 1])));
    }
    amax = fmaxf(amax, __shfl_xor_sync(0xFFFFFFFFu, amax, 1));
    amax = fmaxf(amax, __shfl_xor_sync(0xFFFFFFFFu, amax, 2));
    const float inv = amax > 0.0f ? __fdiv_rn(127.0f, amax) : 0.0f;
    int n[8], sum = 0;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      n[i] = int(__float_as_uint(fmaf(v[i], inv, 12582912.0f)) - 0x4B400000u);
      sum += n[i];
    }
    const uint32_t lo = __byte_perm(__byte_perm(n[0], n[1], 0x0040), __byte_perm(n[2], n[3], 0x0040), 0x5410);
    const uint32_t hi = __byte_perm(__byte_perm(n[4], n[5], 0x0040), __byte_perm(n[6], n[7], 0x0040), 0x5410);
    reinterpret_cast<uint2*>(s_xq)[t] = make_uint2(lo, hi);
    sum += __shfl_xor_sync(0xFFFFFFFFu, sum, 1);
    sum += __shfl_xor_sync(0xFFFFFFFFu, sum, 2);
    if ((t & 3) == 0) s_xd[b] = __fdiv_rn(amax, 127.0f), s_xs[b] = sum;
  }
  __syncthreads();
}
for (int row = first; row < N; row += warps) {
  if constexpr (PIPE == 1) {
#pragma unroll
    for (int k = 0; k < LOADS; ++k) {
#pragma unroll
      for (int j = 0; j < 5; ++j) now[k][j] = next[k][j];
    }
    if (row + warps < N) load_row(next, row + warps);
  } else if (XSRC != 4 || row != first) {
    load_row(now, row);
  }
  if constexpr (FENCE) __syncwarp();
  uint32_t fold = 0;
  int isum = 0;
  float acc = 0.0f;
#pragma unroll
  for (int k = 0; k < LOADS; ++k) {
    const int b = lane + 32 * k;
    if constexpr (WORK == 0) {
#pragma unroll
      for (int j = 0; j < (LAYOUT == 0 ? 4 : 5); ++j) fold ^= now[k][j];
    } else {
      uint32_t q[4];
      float dw;
      block(now, k, q, dw);
      uint4 xa, xb;
      if constexpr (XSRC == 2) {
        xa = xr[k][0], xb = xr[k][1];
      } else {
        xa = reinterpret_cast<const uint4*>(xq_at + 32 * b)[0];
        xb = reinterpret_cast<const uint4*>(xq_at + 32 * b)[1];
      }
      const uint32_t a[4] = {xa.x, xa.y, xa.z, xa.w}, c[4] = {xb.x, xb.y, xb.z, xb.w};
      int dot = 0;
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const uint32_t lo = q[i] & 0x0F0F0F0Fu, hi = (q[i] >> 4) & 0x0F0F0F0Fu;
        dot = __dp4a(int(SUMS ? lo : __vsub4(lo, 0x08080808u)), int(a[i]), dot);
        dot = __dp4a(int(SUMS ? hi : __vsub4(hi, 0x08080808u)), int(c[i]), dot);
      }
      if constexpr (SUMS) dot -= 8 * (XSRC == 2 ? xsr[k] : xs_at[b]);
      if constexpr (WORK == 1) {
        isum += dot;
      } else {
        acc = fmaf((XSRC == 2 ? xdr[k] : xd_at[b]) * dw, float(dot), acc);
      }
    }
  }
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    if constexpr (WORK == 0) fold ^= __shfl_xor_sync(0xFFFFFFFFu, fold, o);
    if constexpr (WORK == 1) isum += __shfl_xor_sync(0xFFFFFFFFu, isum, o);
    if constexpr (WORK == 2) acc += __shfl_xor_sync(0xFFFFFFFFu, acc, o);
  }
  if (lane == 0) y[row] = WORK == 0 ? __uint_as_float(fold) : WORK == 1 ? float(isum) : acc;
}
