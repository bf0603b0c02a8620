// A pre-norm block's gated feed-forward part for one activation row, in one launch: h =
// residual + W_down (act(W_gate x) * (W_up x)) and normed = rms_norm(h) * nw, for Q4_0 repacked
// in 1,024-element super-blocks (formats.h's Q4_0x1024; W_gate and W_up fused, gate rows
// first). The engine otherwise launches gemv_int8's gated mode, then its down product with the
// AddNorm epilogue.
//
// Why: one request's step is host-bound as much as GPU-bound, and MLX spends ~7-11 us of host
// time on every kernel; this is one kernel a layer fewer, and on the H200 it took 37.7 us of GPU
// against the two launches' 37.8-39.0 (session 27's probe, variant 64/8/4/0/3/35:
// notes/gpu-kernels.md; benchmarks/feed_forward.py times this kernel).
//
// How, without a grid-wide barrier: CTA c owns FF_SLICE consecutive intermediate values. Its
// warps compute them as gemv_int8's gated mode computes them with four sub-blocks a lane (the
// same float32 operations in the same order, so the same values: x rounded to int8 in the CTA,
// two rows' loads in flight a warp, gemv_packed.cuh's fence), round them to int8 as the down
// product rounds its input (round_values; the slice is two whole 32-value blocks), then
// multiply the down matrix's FF_SLICE columns by them, a lane a (row, block) pair, and add
// each row's partial sum into an int64 accumulator: the partial rounded to a multiple of 2^-32
// (fixed point). Integer sums do not depend on the order the CTAs add in, so the result is
// the same bits every run, where float atomics were 1.1 us faster but not reproducible. The
// last CTA to finish (gemv_int8.cuh's last_of_grid) adds the residual, writes h and normed,
// and leaves the sums and the count at zero for the next launch.
//
// Limits (checked by the library): x's length K a multiple of 1,024, at most FF_MAX_K; the
// intermediate F a multiple of 1,024 (the down rows' super-blocks); N a multiple of the CTA's
// threads, at most FF_MAX_N; every down output within +-2^31 (the fixed point's range).
// Measured (probe): a warp's first loads issued before x's rounding and before the slice's
// rounding saved ~4 us; the last CTA's loads all issued before its first store ~5 us; 64
// values a CTA beat 32 and 128; each CTA walking the down rows from its own offset saved the
// int64 atomics 1.9 us of contention; two register sets for the next output's loads lost 9 us;
// x rounded beforehand (no rounding in the CTA) saved nothing.

namespace vx {

constexpr int FF_SLICE = 64;      // intermediate values a CTA: two Q4_0 blocks of a down row
constexpr int FF_WARPS = 8;
constexpr int FF_DOWN_PASS = 4;   // down rows a lane has in flight
constexpr int FF_MAX_K = 16384;   // x's int8 copy in static shared memory
constexpr int FF_MAX_N = 8192;    // the last CTA's rows in registers, N / 256 a thread

// gate/up: wgu [2F, K / 1024 * 576]; down: wd [N, F / 1024 * 576]; x [K]; residual, nw, h,
// normed [N]; scratch: uint32 [2N + 4], N int64 sums, then the count (zero before the first
// launch, left zero by each).
template <class T, int ACT, int K, int N>
__device__ __forceinline__ void feed_forward(const uint8_t* wgu, const uint8_t* wd, const T* x,
                                             const T* residual, const T* nw, float eps,
                                             uint32_t* scratch, T* h, T* normed, int F) {
  constexpr int THREADS = FF_WARPS * 32, S = FF_SLICE, NX = K / 32, NSB = K / 1024;
  constexpr int BPR = S / 32, RPW = 32 / BPR;  // down blocks a row; rows a load instruction
  constexpr int PASS = FF_DOWN_PASS, PER = N / THREADS;
  static_assert(K % 1024 == 0 && K <= FF_MAX_K && N % THREADS == 0 && N <= FF_MAX_N,
                "feed_forward: K a multiple of 1,024, N of 256 (library.feed_forward_applies)");
  __shared__ __align__(16) int8_t xq[K];
  __shared__ float xd[NX];
  __shared__ int xs[NX];
  __shared__ float slice[S];
  __shared__ __align__(16) int8_t sq[S];
  __shared__ float sd[BPR];
  __shared__ int ss[BPR];
  __shared__ float part[FF_WARPS];
  long long* sums = reinterpret_cast<long long*>(scratch);
  uint32_t* count = scratch + 2 * N;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int c0 = int(blockIdx.x) * S;
  const size_t gu_row = size_t(NSB) * 576, d_row = size_t(F / 1024) * 576;

  // output i's gate and up rows, every load in flight at once
  uint4 q[2][NSB];
  uint32_t d[2][NSB];
  auto load_pair = [&](int i) {
    const uint8_t* rows[2] = {wgu + size_t(c0 + i) * gu_row, wgu + size_t(F + c0 + i) * gu_row};
#pragma unroll
    for (int r = 0; r < 2; ++r) {
#pragma unroll
      for (int k = 0; k < NSB; ++k) load_packed(rows[r] + k * 576, lane, q[r][k], d[r][k]);
    }
  };
  load_pair(warp);  // in flight while the CTA rounds x (FF_WARPS < FF_SLICE)
  for (int b = threadIdx.x; b < NX; b += THREADS) {
    xd[b] = round_block(x + 32 * b, xq + 32 * b, xs + b);
  }
  __syncthreads();

  for (int i = warp; i < S; i += FF_WARPS) {
    if (i != warp) load_pair(i);
    __syncwarp();  // gemv_packed.cuh's fence: the loads above stay ahead of the products
    float sum[2] = {0.0f, 0.0f};
#pragma unroll
    for (int r = 0; r < 2; ++r) {
#pragma unroll
      for (int k = 0; k < NSB; ++k) {
        const int b = 32 * k + lane;
        const uint4 xa = reinterpret_cast<const uint4*>(xq + 32 * b)[0];
        const uint4 xb = reinterpret_cast<const uint4*>(xq + 32 * b)[1];
        const uint32_t qs[4] = {q[r][k].x, q[r][k].y, q[r][k].z, q[r][k].w};
        const int dot = q4_0_dot(qs, xa, xb, xs[b]);
        sum[r] = fmaf(xd[b], half_to_float(d[r][k]) * float(dot), sum[r]);
      }
#pragma unroll
      for (int o = 16; o > 0; o >>= 1) sum[r] += __shfl_xor_sync(0xFFFFFFFFu, sum[r], o);
    }
    if (lane == 0) {
      const T y = glu<ACT>(rounded<T>(sum[0]), rounded<T>(sum[1]));
      slice[i] = load1(&y);
    }
  }

  // The down matrix's S columns: lane l takes block t = l % BPR of the rows l / BPR, + RPW,
  // ... of its warp's groups; the group's first loads fly while the slice is rounded.
  const int t = lane % BPR;
  const int jb = c0 / 32 + t;  // the block's place in a down row: super-block, then block
  const size_t column = size_t(jb / 32) * 576;
  const int kb = jb % 32;
  uint4 dq[PASS];
  uint32_t dd[PASS];
  // each CTA walks the rows from its own offset: at one time the CTAs' atomics fall on
  // different rows (1.9 us of contention in the probe, PIPE 32)
  const int rot = (int(blockIdx.x) * N / int(gridDim.x)) & ~15;
  auto row_of = [&](int r0, int p) {
    const int row = r0 + p * RPW + lane / BPR + rot;
    return row < N ? row : row - N;
  };
  auto load_rows = [&](int r0) {
#pragma unroll
    for (int p = 0; p < PASS; ++p) {
      load_packed(wd + size_t(row_of(r0, p)) * d_row + column, kb, dq[p], dd[p]);
    }
  };
  const int first = warp * RPW * PASS;
  if (first < N) load_rows(first);
  __syncthreads();
  if (threadIdx.x < BPR) {
    float v[32];
#pragma unroll
    for (int k = 0; k < 32; ++k) v[k] = slice[32 * threadIdx.x + k];
    sd[threadIdx.x] = round_values(v, sq + 32 * threadIdx.x, ss + threadIdx.x);
  }
  __syncthreads();
  const uint4 xa = reinterpret_cast<const uint4*>(sq + 32 * t)[0];
  const uint4 xb = reinterpret_cast<const uint4*>(sq + 32 * t)[1];
  const float dx = sd[t];
  const int xsum = ss[t];
  for (int r0 = first; r0 < N; r0 += FF_WARPS * RPW * PASS) {
    if (r0 != first) load_rows(r0);
    __syncwarp();
#pragma unroll
    for (int p = 0; p < PASS; ++p) {
      const uint32_t qs[4] = {dq[p].x, dq[p].y, dq[p].z, dq[p].w};
      float v = dx * (half_to_float(dd[p]) * float(q4_0_dot(qs, xa, xb, xsum)));
#pragma unroll
      for (int o = 1; o < BPR; o <<= 1) v += __shfl_xor_sync(0xFFFFFFFFu, v, o);
      if (t == 0) {  // 2^32 v to the nearest integer: exact, a power of two's multiple
        atomicAdd(reinterpret_cast<unsigned long long*>(sums) + row_of(r0, p),
                  static_cast<unsigned long long>(__float2ll_rn(v * 4294967296.0f)));
      }
    }
  }

  // The last CTA: h = T(residual + T(y)), normed = T(nw * T(h * rsqrt(mean(h^2) + eps))), as
  // gemv_int8's AddNorm rounds them.
  __syncthreads();
  if (!last_of_grid(count)) return;
  // every load before any store: behind a store to the sums the compiler would issue each
  // next load alone (one L2 round trip a row; ~5 us of tail in the probe)
  float y[PER], r[PER], w[PER];
#pragma unroll
  for (int j = 0; j < PER; ++j) {
    const int row = int(threadIdx.x) + j * THREADS;
    y[j] = float(__ldcg(sums + row)) * 2.3283064365386963e-10f;  // 2^-32
    r[j] = load1(residual + row);
    w[j] = load1(nw + row);
  }
  float sq_sum = 0.0f;
#pragma unroll
  for (int j = 0; j < PER; ++j) {
    const int row = int(threadIdx.x) + j * THREADS;
    sums[row] = 0;
    const T yt = rounded<T>(y[j]);
    const T ht = rounded<T>(r[j] + load1(&yt));
    h[row] = ht;
    y[j] = load1(&ht);  // h, as rounded
    sq_sum = fmaf(y[j], y[j], sq_sum);
  }
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) sq_sum += __shfl_xor_sync(0xFFFFFFFFu, sq_sum, o);
  if (lane == 0) part[warp] = sq_sum;
  __syncthreads();
  float total = 0.0f;
  for (int k = 0; k < FF_WARPS; ++k) total += part[k];
  const float inv = rsqrtf(total / float(N) + eps);
#pragma unroll
  for (int j = 0; j < PER; ++j) {
    const T scaled = rounded<T>(y[j] * inv);
    store1(normed + int(threadIdx.x) + j * THREADS, w[j] * load1(&scaled));
  }
  if (threadIdx.x == 0) *count = 0u;
}

}  // namespace vx
