// Body of benchmarks/fused_boundary.py's fused launch: the first gridDim.x - A_CTAS CTAs compute
// the q/k/v product (gemv_int8, packed Q4_0: the engine's kernel) and count themselves done;
// the last A_CTAS run the attention's stand-in (fused_boundary.cuh), which waits for them.
// The producers never wait, so no order of CTA scheduling deadlocks.
const int producers = int(gridDim.x) - vx_bench::A_CTAS;
uint32_t* counts = const_cast<uint32_t*>(count);
if (int(blockIdx.x) < producers) {
  vx::gemv_int8<GGML_TYPE, T, WARPS, STAGES, PER_LANE, KCAP, XREG, 0, 0>(
      w, x, y, w_shape[0], w_shape[1], int(blockIdx.x), producers);
  __syncthreads();  // every row of the CTA stored
  if (threadIdx.x == 0) {
    __threadfence();
    atomicAdd(counts, 1u);
  }
} else {
  vx_bench::stand_in<T, PROLOGUE, SPIN_NS>(int(blockIdx.x) - producers, chain, y, xn, counts,
                                           producers);
}
