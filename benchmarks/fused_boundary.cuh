// Device code of benchmarks/fused_boundary.py: a stand-in for the paged decode of one Llama-3
// request (A_CTAS = 8 CTAs, one a KV head), to time the q/k/v product and the attention in one
// launch against two (notes/gpu-kernels.md, "Next": the fused attention launch).

namespace vx_bench {

constexpr int A_CTAS = 8;  // the stand-in's CTAs: Llama-3-8B's KV heads
constexpr int HEAD_Q = 512, HEAD_KV = 128, Q_ROWS = 4096, K_ROWS = 1024;  // a head's rows of y

__device__ __forceinline__ uint32_t load_acquire(const uint32_t* p) {
  uint32_t v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// CTA a of the stand-in: PROLOGUE dependent loads through `chain` (the decode's prologue:
// parameters, context length, table entries, each waiting for the one before), then, where
// the product runs in the same launch (producers > 0), the wait until all of its CTAs have
// counted themselves done; then its head's 768 rows of y read from L2 (512 q rows, 128 k,
// 128 v), SPIN_NS of stand-in work, and its q rows written to xn, the next layer's x. The
// last CTA past the wait leaves the counts at zero for the next launch.
template <class T, int PROLOGUE, int SPIN_NS>
__device__ __forceinline__ void stand_in(int a, const int* chain, const T* y, T* xn,
                                         uint32_t* count, int producers) {
  int at = a;
  for (int i = 0; i < PROLOGUE; ++i) at = __ldcg(chain + at);
  if (producers > 0) {
    if (threadIdx.x == 0) {
      while (load_acquire(count) < uint32_t(producers)) __nanosleep(32);
    }
    __syncthreads();
  }
  const unsigned long long t0 = global_ns();
  float sum = 0.f;
  for (int i = threadIdx.x; i < HEAD_Q + 2 * HEAD_KV; i += blockDim.x) {
    const int row = i < HEAD_Q ? a * HEAD_Q + i
                  : i < HEAD_Q + HEAD_KV ? Q_ROWS + a * HEAD_KV + (i - HEAD_Q)
                  : Q_ROWS + K_ROWS + a * HEAD_KV + (i - HEAD_Q - HEAD_KV);
    const T v = __ldcg(y + row);
    sum += float(v);
    if (i < HEAD_Q) xn[a * HEAD_Q + i] = v;
  }
  while (global_ns() - t0 < (unsigned long long)SPIN_NS) {
  }
  if (at == -1 && sum == 12345.f) xn[0] = T(sum);  // never: keeps the chain and the reads
  if (producers > 0 && threadIdx.x == 0 && atomicAdd(count + 1, 1u) == A_CTAS - 1) {
    count[0] = 0;  // every stand-in CTA is past its wait
    count[1] = 0;
  }
}

}  // namespace vx_bench
