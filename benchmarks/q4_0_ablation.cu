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
//   PIPE  1: the next row's loads are issued before this row's products (twice the registers
//         for the weights); 0: a row's loads, then its products
//   SUMS  1: the nibbles' offset of 8 taken once a block from x's block sum xs (as llama.cpp's
//         q8_1 carries it) instead of a byte subtraction per word
// Inputs: qs uint32 [N, nb, 4]; d float16 [N, nb]; xq int8 [32 nb]; xd float32 [nb]; x
// bfloat16 [32 nb] (XSRC 3); xs int32 [nb]. Output y float32 [N]: WORK 0 the fold's bits,
// 1 the integer dot, 2 the product.
constexpr int KMAX = 4096;  // columns at most (shared memory of XSRC 1, 3)
const int N = qs_shape[0], nb = qs_shape[1];
const int lane = threadIdx.x & 31;
const int warps = int(gridDim.x) * (blockDim.x / 32);
const int first = int(blockIdx.x) * (blockDim.x / 32) + (threadIdx.x >> 5);
const uint4* words = reinterpret_cast<const uint4*>(qs);

constexpr bool SHARED_X = XSRC == 1 || XSRC == 3;
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

auto load_row = [&](uint4 (&w)[LOADS], float (&dw)[LOADS], int row) {
#pragma unroll
  for (int k = 0; k < LOADS; ++k) {
    const uint4* p = words + size_t(row) * nb + lane + 32 * k;
    asm("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
        : "=r"(w[k].x), "=r"(w[k].y), "=r"(w[k].z), "=r"(w[k].w) : "l"(p));
    if constexpr (WORK >= 2) {
      unsigned short h;
      asm("ld.global.nc.L1::no_allocate.u16 %0, [%1];"
          : "=h"(h) : "l"(d + size_t(row) * nb + lane + 32 * k));
      dw[k] = __half2float(__ushort_as_half(h));
    }
  }
};

uint4 w[LOADS], w_next[LOADS];
float dw[LOADS], dw_next[LOADS];
if (PIPE && first < N) load_row(w_next, dw_next, first);
for (int row = first; row < N; row += warps) {
  if constexpr (PIPE) {
#pragma unroll
    for (int k = 0; k < LOADS; ++k) w[k] = w_next[k], dw[k] = dw_next[k];
    if (row + warps < N) load_row(w_next, dw_next, row + warps);
  } else {
    load_row(w, dw, row);
  }
  uint32_t fold = 0;
  int isum = 0;
  float acc = 0.0f;
#pragma unroll
  for (int k = 0; k < LOADS; ++k) {
    const int b = lane + 32 * k;
    if constexpr (WORK == 0) {
      fold ^= w[k].x ^ w[k].y ^ w[k].z ^ w[k].w;
    } else {
      uint4 xa, xb;
      if constexpr (XSRC == 2) {
        xa = xr[k][0], xb = xr[k][1];
      } else {
        xa = reinterpret_cast<const uint4*>(xq_at + 32 * b)[0];
        xb = reinterpret_cast<const uint4*>(xq_at + 32 * b)[1];
      }
      const uint32_t q[4] = {w[k].x, w[k].y, w[k].z, w[k].w};
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
        acc = fmaf((XSRC == 2 ? xdr[k] : xd_at[b]) * dw[k], float(dot), acc);
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
