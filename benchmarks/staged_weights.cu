// Body of the probe kernel behind benchmarks/staged_weights.py: a product of one activation row
// with a packed Q4_0 matrix (quant/kernels/packed.py's layout, K = 4096 columns) whose CTAs may
// copy their weight rows into shared memory *before* the row they multiply exists.
//
// MODE 0, one launch: CTAs 0 .. PRODUCERS-1 stand in for a latency-bound kernel (the paged
// decode: 8 CTAs, DRAM nearly idle): each spins SPIN_NS from its start, copies its share of y
// to x, then counts itself in `ready` (a release). The other CTAs (all resident at once: at
// most two of 79 KB an SM) each own ROWS consecutive
// weight rows; with STAGE they copy them into shared memory first and then wait for every
// producer, without STAGE they wait first. Then they round x to int8 blocks (llama.cpp's
// q8_1 rounding, as gemv_int8 does) and multiply it by the rows from shared memory.
// MODE 1, the product alone: no producers and no wait; x is y (a stand-in launch made it).
// MODE 2, one launch: a stand-in for the feed-forward kernel's down phase and its grid-wide
// count first: every CTA reads its share of `big` (DRAM-bound), counts itself, and waits for
// all (counts[96]); then the product of y. STAGE: 0 rows loaded after the count, 1 staged
// and landed before the wait, 2 staged before the wait and landed after it (in flight during
// the stream), 3 staged after the stream, before the count. MODE 3: the stream and count
// alone, then y copied to x (for a product launched after it).
// XT threads round each 32-value block of x (1 or 2). NORM: out is h = resid + W x, and
// normed = rms_norm(h) * nw, each CTA normalizing its own rows once every CTA has put its sum
// of h^2 in `partials` and counted itself (counts[64]); rounded as gemv_int8's AddNorm.
//
// counts (uint32, 64, zero once, never reset): [0] tickets, one a product CTA (a launch's
// number is a ticket / product CTAs + 1: launches sharing counts must run one after another),
// [32] producers ready, summed over launches. times: the GPU's global timer per CTA (start,
// weights staged, x seen, x rounded, rows summed, end; a producer's second entry is its
// release; the seventh: when the CTA counted itself after its stream, MODE 2 and 3).
using staged::K, staged::ROW_BYTES;  // staged_common.cuh, the header
constexpr int T = 7;  // timers a CTA
constexpr int WARPS = 8;
constexpr int ROWS_A_WARP = ROWS / WARPS;
extern __shared__ __align__(16) uint32_t smem[];
uint8_t* rows = reinterpret_cast<uint8_t*>(smem);                        // ROWS * ROW_BYTES
int8_t* xq = reinterpret_cast<int8_t*>(rows + ROWS * ROW_BYTES);       // K
float* xd = reinterpret_cast<float*>(xq + K);                          // K / 32
int* xs = reinterpret_cast<int*>(xd + K / 32);                         // K / 32
__shared__ uint32_t launch;

uint32_t* cnt = const_cast<uint32_t*>(counts);
const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
const int producers = MODE == 0 ? PRODUCERS : 0;
const int cta = int(blockIdx.x);
unsigned long long t0, t;
asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));

if (cta < producers) {  // the stand-in for the latency-bound kernel
  t = t0;
  while (t - t0 < (unsigned long long)SPIN_NS) asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  for (int i = cta * (K / PRODUCERS) + tid; i < (cta + 1) * (K / PRODUCERS); i += blockDim.x) {
    x[i] = y[i];
  }
  __syncthreads();
  if (tid == 0) {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(cnt + 32) : "memory");
    for (int i = 0; i < T; ++i) times[cta * T + i] = i == 0 ? t0 : t;
  }
  return;
}

if ((MODE != 1 || NORM) && tid == 0) launch = atomicAdd(cnt, 1u) / (gridDim.x - producers) + 1;
const int first_row = (cta - producers) * ROWS;
const uint8_t* src = w + size_t(first_row) * ROW_BYTES;

auto stage = [&]() {  // this CTA's rows, 16 bytes a copy
  for (int o = tid * 16; o < ROWS * ROW_BYTES; o += blockDim.x * 16) {
    const unsigned dst = unsigned(__cvta_generic_to_shared(rows + o));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src + o) : "memory");
  }
  asm volatile("cp.async.commit_group;" ::: "memory");
};
__syncthreads();  // `launch` written
unsigned long long t_arrive = 0;
auto stream_and_count = [&]() {  // MODE 2 and 3
  const size_t share = (size_t(big_shape[0]) / gridDim.x) & ~size_t(15);
  const uint4* p = reinterpret_cast<const uint4*>(big + size_t(cta) * share);
  const int n = int(share / 16), step = int(blockDim.x);
  uint32_t acc = 0;
  for (int i = tid; i < n; i += 4 * step) {
    uint4 v[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) v[j] = i + j * step < n ? __ldcs(p + i + j * step) : make_uint4(0, 0, 0, 0);
#pragma unroll
    for (int j = 0; j < 4; ++j) acc ^= v[j].x ^ v[j].y ^ v[j].z ^ v[j].w;
  }
  if (acc == 0x9e3779b9u) x[0] = __float2bfloat16(1.0f);  // keeps the loads
  if (STAGE == 3) stage();
  __syncthreads();
  if (tid == 0) {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t_arrive));
    asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(cnt + 96) : "memory");
    staged::wait_for(cnt + 96, launch * gridDim.x, 1 << 20);
  }
  __syncthreads();
};
if (MODE == 3) {
  stream_and_count();
  for (int i = cta * blockDim.x + tid; i < K; i += gridDim.x * blockDim.x) x[i] = y[i];
  if (tid == 0) {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    for (int i = 0; i < T; ++i) times[cta * T + i] = i == 0 ? t0 : i == 6 ? t_arrive : t;
  }
  return;
}
auto wait_for_x = [&]() {
  if (MODE == 2) stream_and_count();
  if (MODE == 0) {
    if (tid == 0) staged::wait_for(cnt + 32, launch * uint32_t(PRODUCERS), 1 << 20);
    __syncthreads();
  }
};

unsigned long long t_staged, t_seen;
if (STAGE >= 2) {
  if (STAGE == 2) stage();
  wait_for_x();
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t_seen));
  asm volatile("cp.async.wait_all;" ::: "memory");
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t_staged));
} else if (STAGE == 1) {
  stage();
  asm volatile("cp.async.wait_all;" ::: "memory");
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t_staged));
  wait_for_x();
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t_seen));
} else {
  wait_for_x();
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t_seen));
  stage();
  asm volatile("cp.async.wait_all;" ::: "memory");
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t_staged));
}

// x rounded: XT threads a 32-value block (MODE 2: y stands for the normed stream)
staged::round_x<XT>(MODE == 0 ? x : y, xq, xd, xs, tid);
__syncthreads();
unsigned long long t_rounded, t_summed;
asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t_rounded));

// Warp w: rows w * ROWS_A_WARP ..
staged::XLane xl;
xl.load(xq, xd, xs, lane);
float acc[ROWS_A_WARP];
#pragma unroll
for (int r = 0; r < ROWS_A_WARP; ++r) {
  acc[r] = staged::row_dot(rows + (warp * ROWS_A_WARP + r) * ROW_BYTES, xl, lane);
}
asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t_summed));
if (!NORM) {
  if (lane == 0) {
#pragma unroll
    for (int r = 0; r < ROWS_A_WARP; ++r) out[first_row + warp * ROWS_A_WARP + r] = __float2bfloat16(acc[r]);
  }
} else {
  // h = resid + W x, rounded to bf16 as the product then the add round it
  __shared__ float ss_warp[WARPS];
  __shared__ float inv_rms;
  float ss = 0.0f;
#pragma unroll
  for (int r = 0; r < ROWS_A_WARP; ++r) {
    const int row = first_row + warp * ROWS_A_WARP + r;
    const float hv = __bfloat162float(__float2bfloat16(
        __bfloat162float(resid[row]) + __bfloat162float(__float2bfloat16(acc[r]))));
    acc[r] = hv;
    ss = fmaf(hv, hv, ss);
    if (lane == 0) out[row] = __float2bfloat16(hv);
  }
  if (lane == 0) ss_warp[warp] = ss;
  __syncthreads();
  float* part = const_cast<float*>(partials);
  if (tid == 0) {
    float s = 0.0f;
    for (int k = 0; k < WARPS; ++k) s += ss_warp[k];
    part[cta - producers] = s;
    asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(cnt + 64) : "memory");
    staged::wait_for(cnt + 64, launch * uint32_t(gridDim.x - producers), 1 << 20);
  }
  __syncthreads();
  if (warp == 0) {  // every CTA's sum in CTA order: the same total in every CTA
    float s = 0.0f;
    for (int c = lane; c < int(gridDim.x) - producers; c += 32) s += __ldcg(part + c);
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    if (lane == 0) inv_rms = rsqrtf(s / float(N) + 1e-5f);
  }
  __syncthreads();
  if (lane == 0) {
#pragma unroll
    for (int r = 0; r < ROWS_A_WARP; ++r) {
      const int row = first_row + warp * ROWS_A_WARP + r;
      const float scaled = __bfloat162float(__float2bfloat16(acc[r] * inv_rms));
      normed[row] = __float2bfloat16(__bfloat162float(nw[row]) * scaled);
    }
  }
}
__syncthreads();
if (tid == 0) {
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  times[cta * T + 0] = t0;
  times[cta * T + 1] = t_staged;
  times[cta * T + 2] = t_seen;
  times[cta * T + 3] = t_rounded;
  times[cta * T + 4] = t_summed;
  times[cta * T + 5] = t;
  times[cta * T + 6] = t_arrive;
}
