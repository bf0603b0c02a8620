// Body of the stand-in kernel behind benchmarks/l2_prefetch.py: a latency-bound kernel (as the
// paged decode is, ~11 us of one request's layer with DRAM nearly idle) that may request the
// next product's weight w into L2 while it runs. It copies K values of y (the previous
// product's output) to x (the next product's input, so that MLX orders the chain), and spins
// until SPIN_NS nanoseconds have passed since it started. With PREFETCH, the first warp of
// each CTA first asks for its CTA's share of w's first PREFIX bytes (0: all of w) by bulk
// prefetches (sm_90's cp.async.bulk.prefetch.L2: 16-byte aligned, a multiple of 16 bytes, no
// completion to wait for) of PIECE bytes each.
unsigned long long t0;
asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
if (PREFETCH && threadIdx.x < 32) {
  const size_t all = size_t(w_shape[0]) * w_shape[1];
  const size_t bytes = PREFIX > 0 && size_t(PREFIX) < all ? size_t(PREFIX) : all;
  const size_t share = (bytes / gridDim.x) & ~size_t(15);
  const size_t begin = blockIdx.x * share;
  const size_t end = blockIdx.x + 1 == gridDim.x ? bytes : begin + share;
  for (size_t o = begin + threadIdx.x * size_t(PIECE); o < end; o += 32 * size_t(PIECE)) {
    const unsigned n = unsigned(end - o < size_t(PIECE) ? end - o : size_t(PIECE));
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(w + o), "r"(n) : "memory");
  }
}
for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < K; i += gridDim.x * blockDim.x) {
  x[i] = y[i];
}
unsigned long long t = t0;
while (t - t0 < (unsigned long long)SPIN_NS) asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
