// The merge of a split paged decode's spans, inside the kernel (paged_decode_kernel.cuh with
// S > 1): the last CTA of a (sequence, KV head) to finish merges. Included after
// paged_decode.cuh on the GPU, after attention_on_cpu.h in
// tests/kernel_emulation/run_attention.cpp.

namespace vxa {

// Element d of a query head's output from its spans' (max, sum, accumulator) rows p[S][2 + D]
// (paged_decode_kernel.cuh with S > 1), loaded through L2: another CTA wrote them.
template <int D>
__device__ __forceinline__ float merged(const float* p, int splits, int d) {
  float big = -INFINITY;
  for (int s = 0; s < splits; ++s) big = fmaxf(big, __ldcg(p + s * (2 + D)));
  float num = 0.f, den = 0.f;
  for (int s = 0; s < splits; ++s) {
    const float m = __ldcg(p + s * (2 + D));
    const float f = m == -INFINITY ? 0.f : __expf(m - big);  // a span with no tokens
    num += __ldcg(p + s * (2 + D) + 2 + d) * f;
    den += __ldcg(p + s * (2 + D) + 1) * f;
  }
  return den > 0.f ? num / den : 0.f;
}

// After a split launch's CTA has written its spans (every thread): the last of the splits
// CTAs of (seq, kvh) to count merges the REP heads' spans into out and zeroes the count for
// the next launch. Ordered as gemv_int8's AddNorm orders its grid: the CTA's barrier, then
// its thread 0 alone fences (release) and counts, and in the last CTA fences again (acquire)
// before the barrier that lets its threads read. Its fences are __threadfence (fence.sc.gpu),
// where the AddNorm's are vx::fence_acq_rel (quant/kernels/cuda/memory.cuh, which needs the
// quantized kernels' other headers): two a CTA, unmeasured on the GPU as yet.
template <class T, int D, int REP, int WARPS>
__device__ __forceinline__ void merge_last(const float* part, const unsigned* counters, int seq,
                                           int kvh, int n_kv, int splits, T* out) {
  __shared__ bool last;
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned* count = writable(counters) + seq * n_kv + kvh;
    __threadfence();
    last = atomicAdd(count, 1u) == unsigned(splits - 1);
    if (last) {
      __threadfence();
      *count = 0u;  // for the next launch (kernels run in order)
    }
  }
  __syncthreads();
  if (!last) return;
  for (int i = threadIdx.x; i < REP * D; i += WARPS * 32) {
    const size_t head = (size_t)seq * n_kv * REP + kvh * REP + i / D;
    out[head * D + i % D] = from_float<T>(merged<D>(part + head * splits * (2 + D), splits, i % D));
  }
}

}  // namespace vxa
