// Body of the probe kernel behind benchmarks/staged_prefix.py: a large product of one
// activation row (N rows, packed Q4_0, K = 4096: the gate/up product's 28,672 rows) by one CTA
// an SM, each owning a run of consecutive rows, whose first SROWS rows it may copy into shared
// memory while it spins SPIN_NS (standing in for the latency-bound kernels before the
// feed-forward part, with DRAM idle). Then it rounds x and multiplies: the staged rows from
// shared memory, the rest streamed from DRAM, four rows a warp in flight; INTERLEAVE: a warp
// sums two staged rows while each round's loads fly (else all staged rows first). Timers per
// CTA (the GPU's global timer): start, rows staged, spin over, x rounded, staged rows summed
// (INTERLEAVE: the stream's start), end.
using staged::K, staged::ROW_BYTES, staged::SUPERS;  // staged_common.cuh, the header
constexpr int WARPS = 8, T = 6, FLIGHT = 4;
extern __shared__ __align__(16) uint32_t smem[];
uint8_t* rows = reinterpret_cast<uint8_t*>(smem);                   // SROWS * ROW_BYTES
int8_t* xq = reinterpret_cast<int8_t*>(rows + SROWS * ROW_BYTES);  // K
float* xd = reinterpret_cast<float*>(xq + K);                      // K / 32
int* xs = reinterpret_cast<int*>(xd + K / 32);                     // K / 32

const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, cta = int(blockIdx.x);
const int per = (N + int(gridDim.x) - 1) / int(gridDim.x);
const int first = cta * per, count = max(0, min(per, N - first));
const int staged_rows = min(SROWS, count);
const uint8_t* src = w + size_t(first) * ROW_BYTES;
const unsigned long long t0 = staged::now();
for (int o = tid * 16; o < staged_rows * ROW_BYTES; o += blockDim.x * 16) {
  const unsigned dst = unsigned(__cvta_generic_to_shared(rows + o));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src + o) : "memory");
}
asm volatile("cp.async.commit_group;" ::: "memory");
asm volatile("cp.async.wait_all;" ::: "memory");
const unsigned long long t_staged = staged::now();
unsigned long long t = t_staged;
while (t - t0 < (unsigned long long)SPIN_NS) t = staged::now();
const unsigned long long t_seen = t;
staged::round_x<2>(y, xq, xd, xs, tid);
__syncthreads();
const unsigned long long t_rounded = staged::now();
staged::XLane xl;
xl.load(xq, xd, xs, lane);
// A staged row from shared memory, its sum stored
auto staged_row = [&](int r) {
  const float a = staged::row_dot(rows + r * ROW_BYTES, xl, lane);
  if (lane == 0) out[first + r] = __float2bfloat16(a);
};
int next_staged = warp;  // INTERLEAVE: two staged rows a round, while the round's loads fly
if (!INTERLEAVE) {
  for (; next_staged < staged_rows; next_staged += WARPS) staged_row(next_staged);
}
const unsigned long long t_summed = staged::now();
for (int r0 = staged_rows + warp; r0 < count; r0 += WARPS * FLIGHT) {  // from DRAM
  uint4 q[FLIGHT][SUPERS];
  __half d[FLIGHT][SUPERS];
#pragma unroll
  for (int i = 0; i < FLIGHT; ++i) {
    const int r = min(r0 + i * WARPS, count - 1);  // loads in flight together: no branch
    const uint8_t* row = src + size_t(r) * ROW_BYTES;
#pragma unroll
    for (int u = 0; u < SUPERS; ++u) {
      q[i][u] = __ldcs(reinterpret_cast<const uint4*>(row + u * 576 + 16 * lane));
      d[i][u] = __ldcs(reinterpret_cast<const __half*>(row + u * 576 + 512 + 2 * lane));
    }
  }
  for (int k = 0; INTERLEAVE && k < 2 && next_staged < staged_rows; ++k) {
    staged_row(next_staged);
    next_staged += WARPS;
  }
#pragma unroll
  for (int i = 0; i < FLIGHT; ++i) {
    float a = 0.0f;
#pragma unroll
    for (int u = 0; u < SUPERS; ++u) a += staged::dot_block(q[i][u], d[i][u], xl, u);
    a = staged::warp_sum(a);
    if (lane == 0 && r0 + i * WARPS < count) out[first + r0 + i * WARPS] = __float2bfloat16(a);
  }
}
for (; next_staged < staged_rows; next_staged += WARPS) staged_row(next_staged);
__syncthreads();
if (tid == 0) {
  const unsigned long long marks[T] = {t0, t_staged, t_seen, t_rounded, t_summed, staged::now()};
  for (int i = 0; i < T; ++i) times[cta * T + i] = marks[i];
}
