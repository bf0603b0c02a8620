// Runs the CUDA residual add + RMS norm (vexel_core/model/kernels/cuda/add_rms_norm.cu) on the
// CPU; built and driven by tests/test_norm_kernels.py. Usage:
//   run_add_rms_norm ROWS H THREADS PER EPS < x delta w > residual normed
// (PER: 16-byte words a thread, a power of two up to 128, at least H / 4 / THREADS)
// float32 throughout: x and delta [ROWS, H], w [H] in; residual and normed [ROWS, H] out.
#include "launch_on_cpu.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

inline thread_local dim3 blockDim;
#include "add_rms_norm.cuh"

using T = float;

template <int PER>
void body(const float* x, const int* x_shape, const float* delta, const float* w,
          const float* eps, float* residual, float* normed) {
#include "add_rms_norm.cu"
}

template <int PER>
void run(int rows, int threads, const float* x, const int* shape, const float* delta,
         const float* w, const float* eps, float* residual, float* normed) {
  launch(rows, threads, [&] {
    blockDim.x = threads;
    body<PER>(x, shape, delta, w, eps, residual, normed);
  });
}

int main(int argc, char** argv) {
  if (argc != 6) return 2;  // see the usage above
  const int rows = atoi(argv[1]), h = atoi(argv[2]), threads = atoi(argv[3]);
  const int per = atoi(argv[4]);
  const float eps = float(atof(argv[5]));
  std::vector<float> x(size_t(rows) * h), delta(x.size()), w(h);
  for (auto* part : {&x, &delta, &w}) {
    if (fread(part->data(), 4, part->size(), stdin) != part->size()) return 4;
  }
  std::vector<float> residual(x.size(), NAN), normed(x.size(), NAN);  // poisoned
  const int shape[2] = {rows, h};
  auto* f = per == 1 ? run<1> : per == 2 ? run<2> : per == 4 ? run<4> : per == 8 ? run<8>
          : per == 16 ? run<16> : per == 32 ? run<32> : per == 64 ? run<64>
          : per == 128 ? run<128> : nullptr;
  if (f == nullptr || size_t(per) * threads * 4 < size_t(h) || h % 4) return 3;
  f(rows, threads, x.data(), shape, delta.data(), w.data(), &eps, residual.data(), normed.data());
  fwrite(residual.data(), 4, residual.size(), stdout);
  fwrite(normed.data(), 4, normed.size(), stdout);
  return 0;
}
