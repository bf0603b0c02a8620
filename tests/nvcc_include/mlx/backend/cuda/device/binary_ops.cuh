// For tests/test_quant_kernels.py's nvcc compile only: MLX's elementwise functors, which NVRTC
// finds among MLX's JIT headers (compiled into libmlx, not on disk), declared with the same
// names and call shapes so that gemv_int8.cuh's gated mode compiles offline. Never run: on the
// GPU the kernels get MLX's own header, and the CPU emulation has its own stand-in.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace mlx::core::cu {
template <class T> __device__ T from_float(float v) { return T(v); }
struct Add {
  template <class T> __device__ T operator()(T x, T y) { return from_float<T>(float(x) + float(y)); }
};
struct Multiply {
  template <class T> __device__ T operator()(T x, T y) { return from_float<T>(float(x) * float(y)); }
};
struct Power {
  template <class T> __device__ T operator()(T x, T y) { return from_float<T>(powf(float(x), float(y))); }
};
struct Tanh {
  template <class T> __device__ T operator()(T x) { return from_float<T>(tanhf(float(x))); }
};
struct Sigmoid {
  template <class T> __device__ T operator()(T x) { return from_float<T>(1.0f / (1.0f + expf(-float(x)))); }
};
}  // namespace mlx::core::cu
