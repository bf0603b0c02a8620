// A pre-norm block's gated feed-forward part for one activation row, in one launch: h =
// residual + W_down (act(W_gate x) * (W_up x)) and normed = rms_norm(h) * nw, for Q4_0 repacked
// in 1,024-element super-blocks (formats.h's Q4_0x1024; W_gate and W_up fused, gate rows
// first). The engine otherwise launches gemv_int8's gated mode, then its down product with the
// AddNorm epilogue.
//
// Why: one request's step is host-bound as much as GPU-bound, and MLX spends ~7-11 us of host
// time on every kernel; this is one kernel a layer fewer (benchmarks/feed_forward.py times it
// against the two launches; notes/gpu-kernels.md has the figures).
//
// How: two phases with the grid's count between them.
// 1. CTA c owns the FF_SLICE consecutive intermediate values of slice c. Its warps compute
//    them as gemv_int8's gated mode computes them with four sub-blocks a lane (the same float32
//    operations in the same order, so the same values: x rounded to int8 in the CTA, two rows'
//    loads in flight a warp, gemv_packed.cuh's fence), round them to int8 as the down product
//    rounds its input (round_values; a slice is two whole 32-value blocks) into the scratch,
//    and count the slice done.
// 2. Once every slice is done, each CTA copies the rounded values (round_x's layout) into its
//    shared memory and its warps take whole down rows, as gemv_packed takes them on x rounded
//    beforehand: row o's sum is one warp's, in a fixed order, so every launch gives the same
//    bits. The AddNorm epilogue follows (gemv_int8.cuh's add_norm_finish).
// On the H200 (session 36, a Llama-3-8B block, bf16): 33.3 us against the two launches'
// 37.7; its down rows take ~9 us (33 MB, ~3.7 TB/s), the wait ~1.5, the first down row asked
// into L2 during the wait saves ~1 (benchmarks/ff_phases.py). The design it replaced, each
// CTA adding its slice's share of every down row into int64 sums (36 bytes from each of the
// 4,096 rows, 917,504 atomics a layer), took 37.5-38.1 us, its down loop ~15.5.
//
// No CTA may wait for one that cannot run: a grid larger than the GPU holds at once runs its
// last CTAs only after others have left. So a slice is claimed before it is computed (a flag
// each, and a count of the claims), and a CTA waiting for the count of done slices takes any
// slice still unclaimed and computes it itself. Its owner, if it starts later, finds the flag
// set and skips it. On the H200 a Llama-3-8B block's 224 CTAs are all resident (two an SM),
// every CTA claims its own slice long before the first one waits, and the waiters only poll.
// The CPU emulation, which runs the CTAs one after another, has CTA 0 compute every slice.
//
// Limits (checked by the library, feed_forward_applies): K and F multiples of 1,024; the larger
// of them at most FF_MAX_KF (x's or the intermediate's int8 copy in static shared memory).

namespace vx {

constexpr int FF_SLICE = 64;      // intermediate values a CTA: two Q4_0 blocks of a down row
constexpr int FF_WARPS = 8;
// super-blocks of a down row a lane has in flight: two passes of a Llama-3-8B row (F / 1024 =
// 14); the whole row at once took 132 registers a thread with nvcc 13 (one CTA an SM)
constexpr int FF_DOWN_PASS = 7;
constexpr int FF_MAX_KF = 32768;  // 40 KB of int8 copy, scales and sums

// The scratch's layout, in uint32 words: add_norm_finish's count and per-CTA sums, the count of
// done slices, the count of claimed slices, a flag a slice, then (16-byte aligned) the
// intermediate values rounded as round_x lays out x: F int8, F / 32 scales, F / 32 sums.
// Zero before the first launch; each launch leaves every count and flag zero.
struct FeedForwardScratch {
  static __device__ __forceinline__ int act_offset(int slices) {
    return (3 + 2 * slices + 3) & ~3;
  }
  static __device__ __forceinline__ int words(int f) {
    return act_offset(f / FF_SLICE) + f / 4 + f / 16;
  }
  uint32_t* norm;
  uint32_t* done;
  uint32_t* claims;
  uint32_t* claimed;
  uint8_t* act;
  __device__ __forceinline__ FeedForwardScratch(uint32_t* s, int slices)
      : norm(s), done(s + 1 + slices), claims(s + 2 + slices), claimed(s + 3 + slices),
        act(reinterpret_cast<uint8_t*>(s + act_offset(slices))) {}
};

// gate/up: wgu [2F, K / 1024 * 576]; down: wd [N, F / 1024 * 576]; x [K]; residual, nw, h,
// normed [N]; scratch: FeedForwardScratch::words(F) uint32. F / FF_SLICE CTAs of FF_WARPS warps.
template <class T, int ACT, int K, int F>
__device__ __forceinline__ void feed_forward(const uint8_t* wgu, const uint8_t* wd, const T* x,
                                             const T* residual, const T* nw, float eps,
                                             uint32_t* scratch, T* h, T* normed, int N) {
  constexpr int THREADS = FF_WARPS * 32, S = FF_SLICE, NSB = K / 1024, SLICES = F / S;
  constexpr int BPS = S / 32;  // 32-value blocks a slice
  static_assert(K % 1024 == 0 && F % 1024 == 0 && K <= FF_MAX_KF && F <= FF_MAX_KF,
                "feed_forward: K and F multiples of 1,024 (library.feed_forward_applies)");
  // x's int8 copy (phase 1), then the intermediate values' (phase 2): round_x's layout
  constexpr int COPY = (K > F ? K : F) * 5 / 4;
  __shared__ __align__(16) uint8_t copy[COPY];
  __shared__ float slice[S];
  __shared__ bool mine;
  __shared__ int take;
  const FeedForwardScratch sc(scratch, SLICES);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const size_t gu_row = size_t(NSB) * 576, d_row = size_t(F / 1024) * 576;

  // Phase 1. The claim's answer is needed only after x's rounding.
  if (threadIdx.x == 0) {
    mine = atomicExch(sc.claimed + blockIdx.x, 1u) == 0u;
    if (mine) atomicAdd(sc.claims, 1u);
  }
  int8_t* xq = reinterpret_cast<int8_t*>(copy);
  float* xd = reinterpret_cast<float*>(copy + K);
  int* xs = reinterpret_cast<int*>(copy + K + K / 8);
  // output i of slice c's gate and up rows, every load in flight at once
  uint4 q[2][NSB];
  uint32_t d[2][NSB];
  auto load_pair = [&](int c, int i) {
    const size_t row = size_t(c) * S + i;
    const uint8_t* rows[2] = {wgu + row * gu_row, wgu + (F + row) * gu_row};
#pragma unroll
    for (int r = 0; r < 2; ++r) {
#pragma unroll
      for (int k = 0; k < NSB; ++k) load_packed(rows[r] + k * 576, lane, q[r][k], d[r][k]);
    }
  };
  load_pair(blockIdx.x, warp);  // in flight while the CTA rounds x (FF_WARPS < FF_SLICE)
  for (int b = threadIdx.x; b < K / 32; b += THREADS) {
    xd[b] = round_block(x + 32 * b, xq + 32 * b, xs + b);
  }
  __syncthreads();

  // Slice c's values into the scratch, rounded, then counted (release: a CTA that reads the
  // count done acquires them).
  auto compute_slice = [&](int c, bool first_loaded) {
    for (int i = warp; i < S; i += FF_WARPS) {
      if (i != warp || !first_loaded) load_pair(c, i);
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
    __syncthreads();
    if (threadIdx.x < BPS) {
      float v[32];
#pragma unroll
      for (int k = 0; k < 32; ++k) v[k] = slice[32 * threadIdx.x + k];
      const int b = c * BPS + threadIdx.x;  // the block's place among F / 32
      float* ad = reinterpret_cast<float*>(sc.act + F);
      ad[b] = round_values(v, reinterpret_cast<int8_t*>(sc.act) + 32 * b,
                           reinterpret_cast<int*>(ad + F / 32) + b);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      fence_acq_rel();
      atomicAdd(sc.done, 1u);
    }
  };
  // The CTA's own slice (its first pair in flight already), then, until every slice is done,
  // any slice it finds unclaimed (one call site: a second took the kernel to 132 registers).
  // Thread 0 polls the counts (acquiring the slices with the last); while some slice is
  // unclaimed the CTA looks for the first one instead, each thread its flags.
  const int first_row = int(blockIdx.x) * FF_WARPS + warp;
  __shared__ int unclaimed;
  bool asked = false;
  for (int c = mine ? int(blockIdx.x) : -1;; c = take) {
    if (c >= 0) compute_slice(c, c == int(blockIdx.x));
    if (!asked) {  // this warp's first down row into L2, while the CTA waits
      asked = true;
      if (first_row < N) {
        const uint8_t* row = wd + first_row * d_row;
        for (int b = lane * 128; b < int(d_row); b += 32 * 128) prefetch_l2(row + b);
      }
    }
    if (threadIdx.x == 0) {
      uint32_t done, claims;
      do {
        done = load_acquire(sc.done);
        claims = load_relaxed(sc.claims);
      } while (done < uint32_t(SLICES) && claims >= uint32_t(SLICES));
      unclaimed = done < uint32_t(SLICES) ? SLICES : -1;
    }
    __syncthreads();
    if (unclaimed < 0) break;
    for (int j = threadIdx.x; j < SLICES; j += THREADS) {
      if (load_relaxed(sc.claimed + j) == 0u) atomicMin(&unclaimed, j);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      const int j = unclaimed;
      take = j < SLICES && atomicExch(sc.claimed + j, 1u) == 0u ? j : -1;
      if (take >= 0) atomicAdd(sc.claims, 1u);
    }
    __syncthreads();
  }

  // Phase 2: the rounded values copied in (through L2: other CTAs wrote them), then whole rows.
  {
    constexpr int WORDS = F * 5 / 64, PER = (WORDS + THREADS - 1) / THREADS;
    uint4 v[PER];  // every load issued before the first store
#pragma unroll
    for (int j = 0; j < PER; ++j) {
      const int i = int(threadIdx.x) + j * THREADS;
      if (i < WORDS) v[j] = __ldcg(reinterpret_cast<const uint4*>(sc.act) + i);
    }
#pragma unroll
    for (int j = 0; j < PER; ++j) {
      const int i = int(threadIdx.x) + j * THREADS;
      if (i < WORDS) reinterpret_cast<uint4*>(copy)[i] = v[j];
    }
  }
  __syncthreads();
  AddNorm<T> e{residual, nw, eps, h, normed, sc.norm};
  const int8_t* aq = reinterpret_cast<const int8_t*>(copy);
  const float* ad = reinterpret_cast<const float*>(copy + F);
  const int* as = reinterpret_cast<const int*>(copy + F + F / 8);
  for (int o = first_row; o < N; o += int(gridDim.x) * FF_WARPS) {
    const float v = packed_row<FF_DOWN_PASS>(wd + o * d_row, F / 1024, aq, ad, as, lane);
    if (lane == 0) e.store(o, v);
  }
  // the last CTA also leaves the slices' counts and flags at zero for the next launch
  add_norm_finish<FF_WARPS>(e, N, [&] {
    for (int j = threadIdx.x; j < SLICES; j += THREADS) sc.claimed[j] = 0u;
    if (threadIdx.x == 0) {
      *sc.done = 0u;
      *sc.claims = 0u;
    }
  });
}

}  // namespace vx
