// CUDA launches on the CPU for the emulated kernels (run_kernels.cpp, run_attention.cpp).
#pragma once
#include "cuda_fp16.h"

#include <barrier>
#include <memory>
#include <thread>
#include <vector>

// Runs body() as `threads` CUDA threads of each of `ctas` CTAs, one CTA at a time: the threads
// live for the whole launch and meet at a barrier between CTAs (the __shared__ arrays are
// static, so one CTA must be done with them before the next starts).
template <class Body>
void launch(int ctas, int threads, Body body) {
  std::barrier<> block_barrier(threads), between_ctas(threads);
  std::vector<std::unique_ptr<std::barrier<>>> warp_barriers;
  for (int w = 0; w < threads / 32; ++w) warp_barriers.emplace_back(new std::barrier<>(32));
  std::vector<float> slots(threads);
  std::vector<std::thread> pool;
  gridDim.x = ctas;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      threadIdx.x = t;
      warp_barrier = warp_barriers[t / 32].get();
      cta_barrier = &block_barrier;
      warp_slots = slots.data() + (t / 32) * 32;
      for (int cta = 0; cta < ctas; ++cta) {
        blockIdx.x = cta;
        body();
        between_ctas.arrive_and_wait();
      }
    });
  }
  for (auto& t : pool) t.join();
}
