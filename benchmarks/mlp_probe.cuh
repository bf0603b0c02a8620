// A probe (benchmarks/mlp_probe.py): a LLaMA block's whole feed-forward part for one activation
// row in one launch, h = residual + W_down (act(W_gate x) * (W_up x)) and normed = rms_norm(h) *
// nw, on Q4_0 repacked in 1,024-element super-blocks (formats.h's Q4_0x1024), where the engine
// launches two kernels (gemv_int8's gated mode, then its AddNorm epilogue on the down product).
//
// Why: one request's step is host-bound as much as GPU-bound (notes/engine-gpu.md): MLX spends
// ~7-11 us of host time on each custom kernel, and the two launches take 20.2 + 18.2 us of GPU
// where their 99 MB take ~26 us at copy bandwidth (the down product alone 18.2 against 8.7).
//
// How, without a grid-wide barrier: CTA c owns S consecutive intermediate values (a slice of
// F). It computes them (2S rows of W_gate/W_up against x, rounded to int8 in the CTA as
// gemv_int8 rounds it), rounds them to int8 as the down product would round its input (the
// same 32-value blocks: S is a multiple of 32), then multiplies the down matrix's S columns
// by them and adds each row's partial sum into a float32 accumulator (atomics at L2). The last
// CTA to finish adds the residual, writes h, normalises, and leaves the accumulator and its
// count at zero for the next launch. Float atomics add in a varying order: a probe's answer to
// "how fast", not yet an engine kernel (which would add in a fixed order, or in integers).
//
// Template: T (activations), WARPS, S (intermediate values a CTA), ACT (1 SiLU, 2 GELU tanh),
// KC (x's length, a multiple of 1,024), NC (h's length, a multiple of WARPS * 32), PASS2 (down
// rows in flight a lane), PF (1: the CTA's down columns requested into L2 while it computes
// its slice), ATOM (0: a float atomic a row; 1: a lane's PASS2 consecutive rows, four to one
// vector atomic (red.global.add.v4.f32); 2: plain stores, wrong sums: what the atomics cost;
// 3: fixed point, each partial rounded to a multiple of 2^-32 and added as an int64 (acc
// holds 2 NC floats): integer sums are the same in any order, so the result is deterministic),
// PIPE, bits: 1, a warp's first gate/up loads issued before x is rounded; 2, its first down
// loads before the slice is rounded; 4, the next output's gate/up loads before this one's
// products (two sets of registers); 8, x rounded by 8 lanes a 32-value block (round_x8); 16,
// x comes rounded (round_x's buffer, read through L1: what a norm writing x's int8 copy
// would save); 32, each CTA walks the down rows from its own offset (its atomics on other
// rows than its neighbours').

namespace vx {

// 32 values rounded to int8 as round_block rounds them (gemv_int8.cuh): q, the sum of q, and
// d = amax / 127 returned.
__device__ __forceinline__ float round_values(const float* v, int8_t* q, int* sum) {
  float amax = 0.0f;
#pragma unroll
  for (int k = 0; k < 32; ++k) amax = fmaxf(amax, fabsf(v[k]));
  const float inv = amax > 0.0f ? __fdiv_rn(127.0f, amax) : 0.0f;
  uint32_t words[8];
  int s = 0;
#pragma unroll
  for (int k = 0; k < 8; ++k) {
    int n[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      n[j] = int(__float_as_uint(fmaf(v[4 * k + j], inv, 12582912.0f)) - 0x4B400000u);
      s += n[j];
    }
    words[k] = __byte_perm(__byte_perm(n[0], n[1], 0x0040), __byte_perm(n[2], n[3], 0x0040), 0x5410);
  }
  uint4* out = reinterpret_cast<uint4*>(q);
  out[0] = make_uint4(words[0], words[1], words[2], words[3]);
  out[1] = make_uint4(words[4], words[5], words[6], words[7]);
  *sum = s;
  return __fdiv_rn(amax, 127.0f);
}

// x [NX * 32] rounded as round_block rounds it, by 8 lanes a 32-value block (4 values a lane,
// the block's amax and sum by shuffles): every load issued first, then NX * 8 / THREADS
// blocks' worth of arithmetic a lane, where round_block takes one lane through a whole block.
template <int THREADS, int NX, class T>
__device__ __forceinline__ void round_x8(const T* x, int8_t* xq, float* xd, int* xs) {
  constexpr int PASSES = (NX * 8 + THREADS - 1) / THREADS;
  float4 v[PASSES];
#pragma unroll
  for (int p = 0; p < PASSES; ++p) {
    const int e = p * THREADS + int(threadIdx.x);  // the lane's 4 values: x[4e..4e+3]
    v[p] = e < NX * 8 ? load4(x + 4 * e) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  }
#pragma unroll
  for (int p = 0; p < PASSES; ++p) {
    const int e = p * THREADS + int(threadIdx.x);
    float amax = fmaxf(fmaxf(fabsf(v[p].x), fabsf(v[p].y)), fmaxf(fabsf(v[p].z), fabsf(v[p].w)));
#pragma unroll
    for (int o = 1; o < 8; o <<= 1) amax = fmaxf(amax, __shfl_xor_sync(0xFFFFFFFFu, amax, o));
    const float inv = amax > 0.0f ? __fdiv_rn(127.0f, amax) : 0.0f;
    const float f[4] = {v[p].x, v[p].y, v[p].z, v[p].w};
    int n[4], s = 0;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      n[j] = int(__float_as_uint(fmaf(f[j], inv, 12582912.0f)) - 0x4B400000u);
      s += n[j];
    }
#pragma unroll
    for (int o = 1; o < 8; o <<= 1) s += __shfl_xor_sync(0xFFFFFFFFu, s, o);
    if (e < NX * 8) {
      reinterpret_cast<uint32_t*>(xq)[e] =
          __byte_perm(__byte_perm(n[0], n[1], 0x0040), __byte_perm(n[2], n[3], 0x0040), 0x5410);
      if ((e & 7) == 0) {
        xd[e / 8] = __fdiv_rn(amax, 127.0f);
        xs[e / 8] = s;
      }
    }
  }
}

__device__ __forceinline__ int q4_0_dot4(uint4 q, uint4 xa, uint4 xb, int xs) {
  const uint32_t qs[4] = {q.x, q.y, q.z, q.w};
  return q4_0_dot(qs, xa, xb, xs);
}

template <class T, int WARPS, int S, int ACT, int KC, int NC, int PASS2, int PF, int ATOM,
          int PIPE>
__device__ __forceinline__ void mlp_q4_0(const uint8_t* wgu, const uint8_t* wd, const T* x,
                                         const T* residual, const T* nw, float eps, float* acc,
                                         uint32_t* count, T* h, T* normed, int F,
                                         unsigned long long* times = nullptr) {
  constexpr int THREADS = WARPS * 32, NX = KC / 32, NSB = KC / 1024, BPR = S / 32;
  constexpr int RPW = 32 / BPR;  // down rows a warp's load instruction covers
  static_assert(S % 32 == 0 && 32 % BPR == 0 && NC % THREADS == 0, "probe shapes");
  __shared__ __align__(16) int8_t xq[KC];
  __shared__ float xd[NX];
  __shared__ int xs[NX];
  __shared__ float hv[S];
  __shared__ __align__(16) int8_t hq[S];
  __shared__ float hd[BPR];
  __shared__ int hs[BPR];
  __shared__ float part[WARPS];
  __shared__ bool last;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int c0 = int(blockIdx.x) * S;
  const size_t gu_row = size_t(NSB) * 576, d_row = size_t(F / 1024) * 576;
  const int t = lane % BPR;  // the lane's down block within the slice
  const int jb = c0 / 32 + t;  // ... as a block of the down matrix's row
  const size_t col = size_t(jb / 32) * 576;  // its super-block
  const int kb = jb % 32;  // its block there

  if constexpr (PF) {  // the slice's down bytes into L2 (a 32-byte sector holds two blocks)
    for (int r = threadIdx.x; r < NC; r += THREADS) {
      const uint8_t* p = wd + size_t(r) * d_row + size_t(c0 / 1024) * 576 + (c0 % 1024) / 2;
      asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
    }
  }
  constexpr bool PRE = PIPE & 1, PRE2 = PIPE & 2, DB = PIPE & 4, XPRE = PIPE & 16;
  constexpr bool ROT = PIPE & 32;
  const int8_t* gxq = XPRE ? reinterpret_cast<const int8_t*>(x) : xq;
  const float* gxd = XPRE ? reinterpret_cast<const float*>(gxq + KC) : xd;
  const int* gxs = XPRE ? reinterpret_cast<const int*>(gxd + NX) : xs;
  // times (mlp_probe.py --times): each CTA's start, x rounded, slice done, down done, and the
  // last CTA's end, from the GPU's global timer (ns)
  auto mark = [&](int k) {
    if (times != nullptr && threadIdx.x == 0) {
      unsigned long long now;
      asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
      times[5 * blockIdx.x + k] = now;
    }
  };
  mark(0);
  uint4 qa[2][NSB], qb[2][NSB];
  uint32_t da[2][NSB], db[2][NSB];
  auto load_pair = [&](int i, uint4 (&q)[2][NSB], uint32_t (&d)[2][NSB]) {  // output i's rows
    const uint8_t* rows[2] = {wgu + size_t(c0 + i) * gu_row, wgu + size_t(F + c0 + i) * gu_row};
#pragma unroll
    for (int r = 0; r < 2; ++r) {
#pragma unroll
      for (int k = 0; k < NSB; ++k) load_packed(rows[r] + k * 576, lane, q[r][k], d[r][k]);
    }
  };
  // output i's products from its loaded rows, into hv[i]
  auto finish_pair = [&](int i, const uint4 (&q)[2][NSB], const uint32_t (&d)[2][NSB]) {
    float sum[2] = {0.0f, 0.0f};
#pragma unroll
    for (int r = 0; r < 2; ++r) {
#pragma unroll
      for (int k = 0; k < NSB; ++k) {
        const int b = 32 * k + lane;
        const uint4 xa = reinterpret_cast<const uint4*>(gxq + 32 * b)[0];
        const uint4 xb = reinterpret_cast<const uint4*>(gxq + 32 * b)[1];
        const int dot = q4_0_dot4(q[r][k], xa, xb, gxs[b]);
        sum[r] = fmaf(gxd[b], half_to_float(d[r][k]) * float(dot), sum[r]);
      }
#pragma unroll
      for (int o = 16; o > 0; o >>= 1) sum[r] += __shfl_xor_sync(0xFFFFFFFFu, sum[r], o);
    }
    if (lane == 0) {
      const T y = glu<ACT>(rounded<T>(sum[0]), rounded<T>(sum[1]));
      hv[i] = load1(&y);
    }
  };
  if (PRE && warp < S) load_pair(warp, qa, da);
  if constexpr (XPRE) {
  } else if constexpr (PIPE & 8) {
    round_x8<THREADS, NX>(x, xq, xd, xs);
  } else {
    for (int b = threadIdx.x; b < NX; b += THREADS) {
      xd[b] = round_block(x + 32 * b, xq + 32 * b, xs + b);
    }
  }
  __syncthreads();
  mark(1);

  // the slice: output i is act(gate row c0 + i . x) * (up row F + c0 + i . x), both rows'
  // loads issued before the first product (the __syncwarp after them: gemv_packed.cuh's fence)
  if constexpr (DB) {
    if (!PRE && warp < S) load_pair(warp, qa, da);
    for (int i = warp; i < S; i += 2 * WARPS) {
      if (i + WARPS < S) load_pair(i + WARPS, qb, db);
      __syncwarp();
      finish_pair(i, qa, da);
      if (i + WARPS < S) {
        if (i + 2 * WARPS < S) load_pair(i + 2 * WARPS, qa, da);
        __syncwarp();
        finish_pair(i + WARPS, qb, db);
      }
    }
  } else {
    for (int i = warp; i < S; i += WARPS) {
      if (!PRE || i != warp) load_pair(i, qa, da);
      __syncwarp();
      finish_pair(i, qa, da);
    }
  }
  static_assert(ATOM != 1 || PASS2 % 4 == 0, "vector atomics take four rows");
  // ATOM 1: the lane's PASS2 consecutive rows; else rows RPW apart, a load instruction's lanes
  // on consecutive rows
  const int rot = ROT ? (int(blockIdx.x) * NC / int(gridDim.x)) & ~15 : 0;
  auto row_of = [&](int r0, int p) {
    const int row = ATOM == 1 ? r0 + (lane / BPR) * PASS2 + p : r0 + p * RPW + lane / BPR;
    return ROT ? (row + rot) & (NC - 1) : row;
  };
  uint4 q2[PASS2];
  uint32_t d2[PASS2];
  auto load_rows = [&](int r0) {
#pragma unroll
    for (int p = 0; p < PASS2; ++p) {
      load_packed(wd + size_t(row_of(r0, p)) * d_row + col, kb, q2[p], d2[p]);
    }
  };
  const int first = warp * RPW * PASS2;
  if (PRE2 && first < NC) load_rows(first);
  __syncthreads();
  mark(2);
  if (threadIdx.x < BPR) hd[threadIdx.x] = round_values(hv + 32 * threadIdx.x, hq + 32 * threadIdx.x, hs + threadIdx.x);
  __syncthreads();

  // the down matrix's S columns: lane l takes block l % BPR of row l / BPR of each group
  const uint4 xa = reinterpret_cast<const uint4*>(hq + 32 * t)[0];
  const uint4 xb = reinterpret_cast<const uint4*>(hq + 32 * t)[1];
  const float dx = hd[t];
  const int xsum = hs[t];
  for (int r0 = first; r0 < NC; r0 += WARPS * RPW * PASS2) {
    if (!PRE2 || r0 != first) load_rows(r0);
    __syncwarp();
    float v[PASS2];
#pragma unroll
    for (int p = 0; p < PASS2; ++p) {
      v[p] = dx * (half_to_float(d2[p]) * float(q4_0_dot4(q2[p], xa, xb, xsum)));
#pragma unroll
      for (int o = 1; o < BPR; o <<= 1) v[p] += __shfl_xor_sync(0xFFFFFFFFu, v[p], o);
    }
    if (t == 0) {
#pragma unroll
      for (int p = 0; p < PASS2; ++p) {
        if constexpr (ATOM == 0) {
          atomicAdd(acc + row_of(r0, p), v[p]);
        } else if constexpr (ATOM == 3) {
          atomicAdd(reinterpret_cast<unsigned long long*>(acc) + row_of(r0, p),
                    static_cast<unsigned long long>(__float2ll_rn(v[p] * 4294967296.0f)));
        } else if constexpr (ATOM == 2) {
          acc[row_of(r0, p)] = v[p];
        } else if (p % 4 == 0) {
          asm volatile("red.global.add.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(acc + row_of(r0, p)),
                       "f"(v[p]), "f"(v[p + 1]), "f"(v[p + 2]), "f"(v[p + 3]) : "memory");
        }
      }
    }
  }

  // the last CTA: h = T(residual + T(acc)), normed = T(nw * T(h * rsqrt(mean(h^2) + eps)))
  __syncthreads();
  mark(3);
  if (threadIdx.x == 0) {
    fence_acq_rel();
    last = atomicAdd(count, 1u) == gridDim.x - 1;
    if (last) fence_acq_rel();
  }
  __syncthreads();
  if (!last) return;
  constexpr int PER = NC / THREADS;
  // every load first: after a store to acc the compiler would order each next load behind it
  // (one L2 round trip a row: ~7 us of tail at 16 rows a thread, the phases' timer)
  float yv[PER], rv[PER], wv[PER];
#pragma unroll
  for (int j = 0; j < PER; ++j) {
    const int row = int(threadIdx.x) + j * THREADS;
    if constexpr (ATOM == 3) {
      yv[j] = float(__ldcg(reinterpret_cast<const long long*>(acc) + row)) * 2.3283064365386963e-10f;
    } else {
      yv[j] = __ldcg(acc + row);
    }
    rv[j] = load1(residual + row);
    wv[j] = load1(nw + row);
  }
  float hh[PER];
  float ss = 0.0f;
#pragma unroll
  for (int j = 0; j < PER; ++j) {
    const int row = int(threadIdx.x) + j * THREADS;
    if constexpr (ATOM == 3) {
      reinterpret_cast<long long*>(acc)[row] = 0;
    } else {
      acc[row] = 0.0f;
    }
    const T yt = rounded<T>(yv[j]);
    const T ht = rounded<T>(rv[j] + load1(&yt));
    h[row] = ht;
    hh[j] = load1(&ht);
    ss = fmaf(hh[j], hh[j], ss);
  }
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) ss += __shfl_xor_sync(0xFFFFFFFFu, ss, o);
  if (lane == 0) part[warp] = ss;
  __syncthreads();
  float total = 0.0f;
  for (int k = 0; k < WARPS; ++k) total += part[k];
  const float inv = rsqrtf(total / float(NC) + eps);
#pragma unroll
  for (int j = 0; j < PER; ++j) {
    const int row = int(threadIdx.x) + j * THREADS;
    const T scaled = rounded<T>(hh[j] * inv);
    store1(normed + row, wv[j] * load1(&scaled));
  }
  if (threadIdx.x == 0) *count = 0u;
  mark(4);
}

}  // namespace vx
