// Body of the probe kernel behind benchmarks/staged_attention.py: one request's paged decode
// and the output product with its AddNorm epilogue in one launch, the output rows staged in
// shared memory while the attention runs (staged_weights.py measured the idea on a stand-in).
//
// CTAs 0 .. ATTN-1 run the engine's paged decode (vxa::paged_decode, told its CTA count by the
// header's VXA_CTAS, which staged_attention.py defines as ATTN before the kernel's headers), then
// count themselves in scratch[0] (a release). The others each own a run of consecutive rows of
// the packed Q4_0 output weight w [N, K / 32 * 18] (K = the attention's Hq * D = 4096): they
// copy the run into shared memory first, wait for every attention CTA, round the attention's
// output to int8 blocks, and put h = resid + w . x, rounded to T as the product then the add
// would round it, and their sum of h^2 (scratch[2 + p]). The last product CTA to count itself
// (scratch[1]) adds the sums in CTA order, writes normed = T(nw * T(h * rsqrt(mean + eps)))
// (gemv_int8's AddNorm rounding) and zeroes both counts for the next launch. T is bfloat16.
// STAGE 0: the rows are copied only after the wait (the attention runs alone); DELAY: ns a
// product CTA waits from its start before it copies them (the attention's first round trips
// alone); PACE: ns between a CTA's rounds of cp.async copies (16 bytes a thread each; 0: all
// at once; EVICT 0 only);
// EVICT: 0 copies by cp.async; 1 loads into registers marked evict-first in L2 (the
// attention's prefetched rows stay), then stored (cp.async's L2::cache_hint form stops the H200
// with an illegal instruction under CUDA 13, session 52); 2 the same loads unmarked, the
// control for the change of mechanism; SLEEP: ns
// a product CTA sleeps between polls of the count (0: none). times [CTAs, 4], the GPU's global
// timer: an attention CTA's start and end; a product CTA's start, x seen, rows landed, end.
using staged::K, staged::ROW_BYTES;  // staged_common.cuh
constexpr int THREADS = WARPS * 32;
uint32_t* sc = const_cast<uint32_t*>(scratch);

const unsigned long long t0 = staged::now();
if (int(blockIdx.x) < ATTN) {
  vxa::paged_decode<T, D, REP, BS, WARPS, PREFETCH>(
      q, q_shape, q_strides, k_pool, k_pool_shape, v_pool, tables, tables_shape,
      tables_strides, ctx_lens, ctx_lens_strides, fparams, iparams, rope_freqs,
      rope_freqs_shape, counters, after, k_new, k_new_strides, v_new, v_new_strides, new_slots,
      new_slots_strides, out, part, done);
  __syncthreads();  // every thread's part of out written (a span's merge included)
  if (threadIdx.x == 0) {
    times[blockIdx.x * 4] = t0;
    times[blockIdx.x * 4 + 1] = staged::now();
    __threadfence();
    asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(sc) : "memory");
  }
  return;
}

extern __shared__ __align__(16) uint32_t smem[];
const int n = int(w_shape[0]);
const int products = int(gridDim.x) - ATTN, p = int(blockIdx.x) - ATTN;
const int per = (n + products - 1) / products;
const int first = p * per, count = max(0, min(per, n - first));
uint8_t* rows = reinterpret_cast<uint8_t*>(smem);                  // per * ROW_BYTES
int8_t* xq = reinterpret_cast<int8_t*>(rows + per * ROW_BYTES);   // K
float* xd = reinterpret_cast<float*>(xq + K);                     // K / 32
int* xs = reinterpret_cast<int*>(xd + K / 32);                    // K / 32
__shared__ float ss_warp[WARPS];
__shared__ float s_resid[64];  // the CTA's rows of resid (at most 64 rows a CTA)
__shared__ bool last;
const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;

const uint8_t* src = w + size_t(first) * ROW_BYTES;
auto stage = [&]() {
  const int bytes = count * ROW_BYTES;
  if (EVICT == 0) {  // PACE applies to these copies only
    const unsigned long long begun = staged::now();
    int round = 0;
    for (int o = tid * 16; o < bytes; o += THREADS * 16, ++round) {
      if (PACE > 0) {  // a round of copies every PACE ns: the attention's loads queue behind less
        while (staged::now() - begun < (unsigned long long)round * PACE) {
        }
      }
      const unsigned dst = unsigned(__cvta_generic_to_shared(rows + o));
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src + o) : "memory");
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
    return;
  }
  uint64_t policy = 0;
  if (EVICT == 1) asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
  constexpr int BATCH = 8;  // 16-byte words a thread in flight
  for (int o0 = tid * 16; o0 < bytes; o0 += BATCH * THREADS * 16) {
    uint4 v[BATCH];
#pragma unroll
    for (int j = 0; j < BATCH; ++j) {
      const int o = o0 + j * THREADS * 16;
      if (o >= bytes) continue;
      if (EVICT == 1) {
        asm volatile("ld.global.L2::cache_hint.v4.u32 {%0,%1,%2,%3}, [%4], %5;"
                     : "=r"(v[j].x), "=r"(v[j].y), "=r"(v[j].z), "=r"(v[j].w)
                     : "l"(src + o), "l"(policy));
      } else {
        v[j] = *reinterpret_cast<const uint4*>(src + o);
      }
    }
#pragma unroll
    for (int j = 0; j < BATCH; ++j) {
      const int o = o0 + j * THREADS * 16;
      if (o < bytes) *reinterpret_cast<uint4*>(rows + o) = v[j];
    }
  }
};
if (STAGE) {
  if (DELAY > 0) {
    while (staged::now() - t0 < (unsigned long long)DELAY) {
    }
  }
  stage();
}
if (tid < count) s_resid[tid] = float(resid[first + tid]);  // in flight during the wait
if (tid == 0) staged::wait_for(sc, uint32_t(ATTN), 1 << 22, SLEEP);
__syncthreads();
const unsigned long long t_seen = staged::now();
if (!STAGE) stage();
asm volatile("cp.async.wait_all;" ::: "memory");
__syncthreads();
const unsigned long long t_landed = staged::now();
staged::round_x<2>(out, xq, xd, xs, tid);  // out: [1, Hq, D], K values
__syncthreads();

staged::XLane xl;
xl.load(xq, xd, xs, lane);
float ss = 0.0f;
for (int r = warp; r < count; r += WARPS) {
  const float a = staged::row_dot(rows + r * ROW_BYTES, xl, lane);
  // h as the product's output, then the add, would round it
  const float hv = float(T(s_resid[r] + float(T(a))));
  if (lane == 0) h[first + r] = T(hv);
  ss = fmaf(hv, hv, ss);
}
if (lane == 0) ss_warp[warp] = ss;
__syncthreads();
if (tid == 0) {
  times[blockIdx.x * 4] = t0;
  times[blockIdx.x * 4 + 1] = t_seen;
  times[blockIdx.x * 4 + 2] = t_landed;
  times[blockIdx.x * 4 + 3] = staged::now();
  float s = 0.0f;
  for (int k = 0; k < WARPS; ++k) s += ss_warp[k];
  reinterpret_cast<float*>(sc + 2)[p] = s;
  __threadfence();
  last = atomicAdd(sc + 1, 1u) == uint32_t(products - 1);
}
__syncthreads();
if (!last) return;
__threadfence();
float s = 0.0f;  // every CTA's sum, in an order fixed by the grid (the same every launch)
for (int c = lane; c < products; c += 32) s += __ldcg(reinterpret_cast<const float*>(sc + 2) + c);
s = staged::warp_sum(s);
const float inv = rsqrtf(s / float(n) + eps[0]);
constexpr int VEC = 16 / sizeof(T), U = 2;  // 16-byte words, U a thread in flight (n % VEC == 0)
for (int base = tid; base < n / VEC; base += THREADS * U) {
  uint4 hw[U], ww[U];
#pragma unroll
  for (int j = 0; j < U; ++j) {
    const int wd = min(base + j * THREADS, n / VEC - 1);
    hw[j] = __ldcg(reinterpret_cast<const uint4*>(h) + wd);
    ww[j] = reinterpret_cast<const uint4*>(nw)[wd];
  }
#pragma unroll
  for (int j = 0; j < U; ++j) {
    if (base + j * THREADS >= n / VEC) break;
    const T* hv = reinterpret_cast<const T*>(&hw[j]);
    const T* wv = reinterpret_cast<const T*>(&ww[j]);
    uint4 o;
    T* ov = reinterpret_cast<T*>(&o);
#pragma unroll
    for (int e = 0; e < VEC; ++e) ov[e] = T(float(wv[e]) * float(T(float(hv[e]) * inv)));
    reinterpret_cast<uint4*>(normed)[base + j * THREADS] = o;
  }
}
if (tid == 0) {
  sc[0] = 0;
  sc[1] = 0;
}
