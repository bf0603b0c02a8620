// Runs the CUDA cache write (vexel_core/kvcache/kernels/cuda/cache_write.cu) on the CPU;
// built and driven by tests/test_kv_pool.py. Usage:
//   run_cache_write T HKV D N_SLOTS ROW < inputs > outputs
// Inputs on stdin (float32): k and v as [T, ROW] with the token's [HKV, D] features first
// (slices of a wider array, as a fused projection's output), slots [T] (int32), then k_pool
// and v_pool [N_SLOTS, HKV, D]. Writes the two pools after the write, then `done` (int32).
#include "launch_on_cpu.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "cache_write.cuh"

inline thread_local dim3 blockDim;
constexpr int THREADS = 256;  // as vexel_core/kvcache/kernels/__init__.py

void body(const float* k, const int* k_shape, const int64_t* k_strides, const float* v,
          const int64_t* v_strides, const int* slots, const float* k_pool,
          const float* v_pool, const int* after, int* done) {
#include "cache_write.cu"
}

int main(int argc, char** argv) {
  if (argc != 6) return 2;  // see the usage above
  const int T = atoi(argv[1]), hkv = atoi(argv[2]), d = atoi(argv[3]);
  const int n_slots = atoi(argv[4]), row = atoi(argv[5]);
  std::vector<float> k(size_t(T) * row), v(k.size());
  std::vector<int> slots(T);
  std::vector<float> k_pool(size_t(n_slots) * hkv * d), v_pool(k_pool.size());
  for (auto* part : {&k, &v}) {
    if (fread(part->data(), 4, part->size(), stdin) != part->size()) return 4;
  }
  if (fread(slots.data(), 4, slots.size(), stdin) != slots.size()) return 4;
  for (auto* part : {&k_pool, &v_pool}) {
    if (fread(part->data(), 4, part->size(), stdin) != part->size()) return 4;
  }
  const int shape[3] = {T, hkv, d};
  const int64_t strides[3] = {row, d, 1};
  const int after = 0;
  int done = -1;
  const size_t n = 2 * size_t(T) * hkv * d;
  launch(int((n + THREADS - 1) / THREADS), THREADS, [&] {
    blockDim.x = THREADS;
    body(k.data(), shape, strides, v.data(), strides, slots.data(), k_pool.data(),
         v_pool.data(), &after, &done);
  });
  fwrite(k_pool.data(), 4, k_pool.size(), stdout);
  fwrite(v_pool.data(), 4, v_pool.size(), stdout);
  fwrite(&done, 4, 1, stdout);
  return 0;
}
