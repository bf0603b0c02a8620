// Runs the CUDA residual add + RMS norm (vexel_core/model/kernels/cuda/add_rms_norm.cu) on the
// CPU; built and driven by tests/test_norm_kernels.py. Usage:
//   run_add_rms_norm ROWS H THREADS EPS < x delta w > residual normed
// float32 throughout: x and delta [ROWS, H], w [H] in; residual and normed [ROWS, H] out.
#include "launch_on_cpu.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

inline float rsqrtf(float v) { return 1.0f / std::sqrt(v); }
#include "add_rms_norm.cuh"

inline thread_local dim3 blockDim;
using T = float;

void body(const float* x, const int* x_shape, const float* delta, const float* w,
          const float* eps, float* residual, float* normed) {
#include "add_rms_norm.cu"
}

int main(int argc, char** argv) {
  if (argc != 5) return 2;  // see the usage above
  const int rows = atoi(argv[1]), h = atoi(argv[2]), threads = atoi(argv[3]);
  const float eps = float(atof(argv[4]));
  std::vector<float> x(size_t(rows) * h), delta(x.size()), w(h);
  for (auto* part : {&x, &delta, &w}) {
    if (fread(part->data(), 4, part->size(), stdin) != part->size()) return 4;
  }
  std::vector<float> residual(x.size(), NAN), normed(x.size(), NAN);  // poisoned
  const int shape[2] = {rows, h};
  launch(rows, threads, [&] {
    blockDim.x = threads;
    body(x.data(), shape, delta.data(), w.data(), &eps, residual.data(), normed.data());
  });
  fwrite(residual.data(), 4, residual.size(), stdout);
  fwrite(normed.data(), 4, normed.size(), stdout);
  return 0;
}
