// MLX's elementwise functors for the CPU emulation (see cuda_fp16.h in tests/kernel_emulation):
// found under MLX's name by gemv_int8.cuh's include. Only those the gated mode uses, each on a
// float or an emulated bfloat16 or float16 as MLX's CUDA functors compute on T: every
// operation rounded to T, Sigmoid by MLX's formula (unary_ops.cuh: y = 1 / (1 + exp(|x|)),
// then y or 1 - y). The CPU's exp, tanh and pow are glibc's, not CUDA's: results may differ
// from the GPU's in the last bit of an intermediate.
#pragma once
#include <cmath>
#include <type_traits>

#include "memory_on_cpu.h"

namespace mlx::core::cu {

inline float to_float(float v) { return v; }
inline float to_float(__nv_bfloat16 v) { return vx::bf16_to_float(v.bits); }
inline float to_float(__half v) { return __half2float(v); }
template <class T>
T from_float(float v) {
  if constexpr (std::is_same_v<T, float>) {
    return v;
  } else if constexpr (std::is_same_v<T, __half>) {
    return T{vx::float_to_f16(v)};
  } else {
    return T{vx::float_to_bf16(v)};
  }
}

struct Add {
  template <class T> T operator()(T x, T y) { return from_float<T>(to_float(x) + to_float(y)); }
};
struct Multiply {
  template <class T> T operator()(T x, T y) { return from_float<T>(to_float(x) * to_float(y)); }
};
struct Power {
  template <class T> T operator()(T x, T y) {
    return from_float<T>(std::pow(to_float(x), to_float(y)));
  }
};
struct Tanh {
  template <class T> T operator()(T x) { return from_float<T>(std::tanh(to_float(x))); }
};
struct Sigmoid {
  template <class T> T operator()(T x) {
    const float e = to_float(from_float<T>(std::exp(std::fabs(to_float(x)))));
    const float y = to_float(from_float<T>(1.0f / to_float(from_float<T>(1.0f + e))));
    return from_float<T>(to_float(x) < 0 ? y : 1.0f - y);
  }
};

}  // namespace mlx::core::cu
