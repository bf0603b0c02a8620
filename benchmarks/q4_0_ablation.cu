// Body of the kernels behind benchmarks/q4_0_ablation.py: the packed Q4_0 prototype's access
// pattern (branch next/packed-q4_0: qs [N, nb, 16], one 16-byte word a block; warp w takes rows
// w, w + W, ...; lane l words l, l + 32, ... of a row, all LOADS loads of a row issued before
// any is used), with the work after the loads added one piece at a time by MODE:
//   0  the loads alone, folded by XOR (the floor of this access pattern)
//   1  + Q4_0's nibbles times x's int8 (dp4a), x rounded beforehand, read from global (L1)
//   2  + the block scales d (float16, one 2-byte load a block) and x's, as y = sum d dx dot
//   3  + x rounded by every CTA into shared memory first (a barrier), read from there: the
//      prototype's own structure, with its L2 prefetch of each warp's first row
//   4, 5  MODE 1, 2 with the nibbles' offset of 8 taken once a block from x's block sum xs
//      (as llama.cpp's q8_1 carries it) instead of a byte subtraction per word
// Inputs: qs uint32 [N, nb, 4]; d float16 [N, nb]; xq int8 [32 nb]; xd float32 [nb];
// x bfloat16 [32 nb] (MODE 3); xs int32 [nb] (MODE 4, 5). Output y float32 [N] (MODE 0: the
// fold's bits; MODE 1, 4: the integer dot).
const int N = qs_shape[0], nb = qs_shape[1];
const int lane = threadIdx.x & 31;
const int warps = int(gridDim.x) * (blockDim.x / 32);
const int first = int(blockIdx.x) * (blockDim.x / 32) + (threadIdx.x >> 5);
const uint4* words = reinterpret_cast<const uint4*>(qs);

__shared__ int8_t s_xq[MODE == 3 ? 32 * 4096 / 32 : 1];  // K <= 4096
__shared__ float s_xd[MODE == 3 ? 4096 / 32 : 1];
if constexpr (MODE == 3) {
  if (first < N) {
    for (int k = 0; k < LOADS; ++k) {
      const int b = lane + 32 * k;
      if (b < nb) asm volatile("prefetch.global.L2 [%0];" ::"l"(words + size_t(first) * nb + b));
    }
  }
  // x rounded per 32 values as quantize_q8_1 does: d = max|x| / 127, q = rint(x / d)
  for (int b = threadIdx.x; b < nb; b += blockDim.x) {
    float v[32], amax = 0.0f;
    for (int i = 0; i < 32; ++i) {
      v[i] = float(x[32 * b + i]);
      amax = fmaxf(amax, fabsf(v[i]));
    }
    const float dx = amax / 127.0f;
    for (int i = 0; i < 32; ++i) s_xq[32 * b + i] = int8_t(dx > 0.0f ? rintf(v[i] / dx) : 0.0f);
    s_xd[b] = dx;
  }
  __syncthreads();
}
constexpr bool SUMS = MODE >= 4;
constexpr int WORK = SUMS ? MODE - 3 : MODE;  // what MODE 4, 5 otherwise do as 1, 2
const int8_t* xq_at = MODE == 3 ? s_xq : reinterpret_cast<const int8_t*>(xq);
const float* xd_at = MODE == 3 ? s_xd : xd;

for (int row = first; row < N; row += warps) {
  uint4 w[LOADS];
  float dw[LOADS];
#pragma unroll
  for (int k = 0; k < LOADS; ++k) {
    const int b = lane + 32 * k;
    if (b < nb) {
      const uint4* p = words + size_t(row) * nb + b;
      asm("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
          : "=r"(w[k].x), "=r"(w[k].y), "=r"(w[k].z), "=r"(w[k].w) : "l"(p));
      if constexpr (WORK >= 2) {
        unsigned short h;
        asm("ld.global.nc.L1::no_allocate.u16 %0, [%1];" : "=h"(h) : "l"(d + size_t(row) * nb + b));
        dw[k] = __half2float(__ushort_as_half(h));
      }
    }
  }
  uint32_t fold = 0;
  int isum = 0;
  float acc = 0.0f;
#pragma unroll
  for (int k = 0; k < LOADS; ++k) {
    const int b = lane + 32 * k;
    if (b >= nb) break;
    if constexpr (MODE == 0) {
      fold ^= w[k].x ^ w[k].y ^ w[k].z ^ w[k].w;
    } else {
      const uint4 xa = reinterpret_cast<const uint4*>(xq_at + 32 * b)[0];
      const uint4 xb = reinterpret_cast<const uint4*>(xq_at + 32 * b)[1];
      const uint32_t q[4] = {w[k].x, w[k].y, w[k].z, w[k].w};
      const uint32_t a[4] = {xa.x, xa.y, xa.z, xa.w}, c[4] = {xb.x, xb.y, xb.z, xb.w};
      int dot = 0;
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int lo = SUMS ? int(q[i] & 0x0F0F0F0Fu) : int(__vsub4(q[i] & 0x0F0F0F0Fu, 0x08080808u));
        const int hi = SUMS ? int((q[i] >> 4) & 0x0F0F0F0Fu)
                            : int(__vsub4((q[i] >> 4) & 0x0F0F0F0Fu, 0x08080808u));
        dot = __dp4a(lo, int(a[i]), dot);
        dot = __dp4a(hi, int(c[i]), dot);
      }
      if constexpr (SUMS) dot -= 8 * xs[b];
      if constexpr (WORK == 1) isum += dot;
      else acc = fmaf(xd_at[b] * dw[k], float(dot), acc);
    }
  }
  for (int o = 16; o > 0; o >>= 1) {
    fold ^= __shfl_xor_sync(0xFFFFFFFFu, fold, o);
    isum += __shfl_xor_sync(0xFFFFFFFFu, isum, o);
    acc += __shfl_xor_sync(0xFFFFFFFFu, acc, o);
  }
  if (lane == 0) {
    y[row] = MODE == 0 ? __uint_as_float(fold) : WORK == 1 ? float(isum) : acc;
  }
}
