// Device functions shared by the probes of benchmarks/staged_weights.py and staged_prefix.py
// (passed to mx.fast.cuda_kernel as their header): x rounded to int8 blocks in shared memory,
// and one packed Q4_0 row's super-block dotted with it.
namespace staged {

constexpr int K = 4096;                 // the products' columns (Llama-3-8B's hidden size)
constexpr int ROW_BYTES = K / 32 * 18;  // a packed Q4_0 row: 2,304 bytes
constexpr int SUPERS = K / 1024;        // super-blocks a row

// x's K bf16 values rounded per 32-value block by XT threads a block (tid < K / 32 * XT), as
// llama.cpp's quantize_q8_1 and gemv_int8 round them: d = amax / 127, q = rint(x * (127 /
// amax)); the block's sum of q beside. Read through L2 (another CTA may have written x during
// the launch). The caller synchronizes the CTA after.
template <int XT>
__device__ __forceinline__ void round_x(const __nv_bfloat16* x, int8_t* xq, float* xd, int* xs,
                                        int tid) {
  constexpr int PER = 32 / XT;  // values a thread
  if (tid >= K / 32 * XT) return;
  const int b = tid / XT, part = tid % XT;
  const uint4* v4 = reinterpret_cast<const uint4*>(x + b * 32 + part * PER);
  uint4 raw[PER / 8];
#pragma unroll
  for (int i = 0; i < PER / 8; ++i) raw[i] = __ldcg(v4 + i);
  const __nv_bfloat16* v = reinterpret_cast<const __nv_bfloat16*>(raw);
  float amax = 0.0f;
#pragma unroll
  for (int i = 0; i < PER; ++i) amax = fmaxf(amax, fabsf(__bfloat162float(v[i])));
  if (XT == 2) amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, 1));
  const float inv = amax > 0.0f ? __fdiv_rn(127.0f, amax) : 0.0f;
  int sum = 0;
  uint32_t packed[PER / 4];
#pragma unroll
  for (int i = 0; i < PER / 4; ++i) {
    uint32_t word = 0;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int q = __float2int_rn(__fmul_rn(__bfloat162float(v[4 * i + j]), inv));
      sum += q;
      word |= uint32_t(q & 0xff) << (8 * j);
    }
    packed[i] = word;
  }
  uint4* dst = reinterpret_cast<uint4*>(xq + b * 32 + part * PER);
#pragma unroll
  for (int i = 0; i < PER / 16; ++i) {
    dst[i] = make_uint4(packed[4 * i], packed[4 * i + 1], packed[4 * i + 2], packed[4 * i + 3]);
  }
  if (XT == 2) sum += __shfl_xor_sync(0xffffffffu, sum, 1);
  if (part == 0) {
    xd[b] = __fdiv_rn(amax, 127.0f);
    xs[b] = sum;
  }
}

// A lane's share of rounded x: Q4_0 block `lane` of each super-block (x's block u * 32 + lane)
struct XLane {
  uint4 lo[SUPERS], hi[SUPERS];
  float d[SUPERS];
  int s[SUPERS];
  __device__ __forceinline__ void load(const int8_t* xq, const float* xd, const int* xs, int lane) {
#pragma unroll
    for (int u = 0; u < SUPERS; ++u) {
      const uint4* xb = reinterpret_cast<const uint4*>(xq + (u * 32 + lane) * 32);
      lo[u] = xb[0];
      hi[u] = xb[1];
      d[u] = xd[u * 32 + lane];
      s[u] = xs[u * 32 + lane];
    }
  }
};

// A lane's part of one packed Q4_0 super-block's dot with x: its block's quants (one 16-byte
// word at 16 lane) and d (at 512 + 2 lane), times x's block u * 32 + lane.
__device__ __forceinline__ float dot_block(uint4 q, __half dw, const XLane& x, int u) {
  const uint32_t qw[4] = {q.x, q.y, q.z, q.w};
  const uint32_t lo[4] = {x.lo[u].x, x.lo[u].y, x.lo[u].z, x.lo[u].w};
  const uint32_t hi[4] = {x.hi[u].x, x.hi[u].y, x.hi[u].z, x.hi[u].w};
  int s = -8 * x.s[u];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    s = __dp4a(int(qw[i] & 0x0f0f0f0fu), int(lo[i]), s);
    s = __dp4a(int((qw[i] >> 4) & 0x0f0f0f0fu), int(hi[i]), s);
  }
  return __half2float(dw) * x.d[u] * float(s);
}

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// One packed Q4_0 row (in shared memory) dotted with x by a warp: the sum, in every lane.
__device__ __forceinline__ float row_dot(const uint8_t* row, const XLane& x, int lane) {
  float a = 0.0f;
#pragma unroll
  for (int u = 0; u < SUPERS; ++u) {
    a += dot_block(*reinterpret_cast<const uint4*>(row + u * 576 + 16 * lane),
                   *reinterpret_cast<const __half*>(row + u * 576 + 512 + 2 * lane), x, u);
  }
  return warp_sum(a);
}

// Polls *count* (an acquire each time) until it reaches *goal* (counts that only grow, compared
// modulo 2^32), sleeping sleep_ns between polls if nonzero. Bounded by max_polls: a wrong count
// gives wrong outputs (the probes' checks catch them), not a hung launch.
__device__ __forceinline__ void wait_for(const uint32_t* count, uint32_t goal, int max_polls,
                                         unsigned sleep_ns = 0) {
  uint32_t seen;
  int polls = 0;
  do {
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(seen) : "l"(count) : "memory");
    if (sleep_ns > 0 && int(seen - goal) < 0) __nanosleep(sleep_ns);
  } while (int(seen - goal) < 0 && ++polls < max_polls);
}

__device__ __forceinline__ unsigned long long now() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

}  // namespace staged
