// Runs cuda/gemm_blocks.cuh (a few activation rows times a format's own blocks, on the tensor
// cores) on the CPU; built and driven by tests/test_gemm_blocks.py. Usage (the blocks' rows,
// then x's bits, on stdin):
//   run_gemm_blocks GGML_TYPE WK MT STAGES BF16 N ROW_BYTES M K > y
// BF16=1: x and y in bfloat16, else float16.
#include "prelude.cuh"
#include "decode.h"
#include "formats.h"
#include "memory_on_cpu.h"
#include "launch_on_cpu.h"
#include "kernels.cuh"
#include "gemv_int8.cuh"
#include "gemv_packed.cuh"
#include "gemm_packed.cuh"
#include "gemm_blocks.cuh"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

template <class F, class T>
int run(int wk, int mt, int stages, const uint8_t* w, const T* x, int n, int row_bytes, int m) {
  std::vector<T> y(size_t(m) * n);
  std::memset(y.data(), 0xFF, y.size() * sizeof(T));  // NaN in bfloat16 and float16
  const int ctas = (n + 15) / 16 * ((m + mt - 1) / mt);
  auto go = [&](auto kernel) {
    launch(ctas, wk * 32, [&] { kernel(w, x, y.data(), n, row_bytes, m); });
  };
  // the tests' tilings: the library's defaults (8 warps, one stage, 8 or 16 rows), 4 warps over
  // two stages, and awkward ones: three k-slices (chunks not a multiple), one warp with four
  // tiles of x rows
  if (wk == 8 && mt == 8 && stages == 1) go(vx::gemm_blocks<F, T, 8, 8, 1>);
  else if (wk == 8 && mt == 16 && stages == 1) go(vx::gemm_blocks<F, T, 8, 16, 1>);
  else if (wk == 4 && mt == 8 && stages == 2) go(vx::gemm_blocks<F, T, 4, 8, 2>);
  else if (wk == 3 && mt == 16 && stages == 2) go(vx::gemm_blocks<F, T, 3, 16, 2>);
  else if (wk == 1 && mt == 32 && stages == 3) go(vx::gemm_blocks<F, T, 1, 32, 3>);
  else return 3;
  fwrite(y.data(), sizeof(T), y.size(), stdout);
  return 0;
}

template <class T>
int run_type(int type, int wk, int mt, int stages, const uint8_t* w, const T* x, int n,
             int row_bytes, int m) {
  switch (type) {
#define VX_TYPE(NUM) \
    case NUM: return run<vx::FormatOf<NUM>::type, T>(wk, mt, stages, w, x, n, row_bytes, m);
    VX_TYPE(2) VX_TYPE(3) VX_TYPE(6) VX_TYPE(7) VX_TYPE(8)
    VX_TYPE(10) VX_TYPE(11) VX_TYPE(12) VX_TYPE(13) VX_TYPE(14)
#undef VX_TYPE
  }
  return 2;
}

int main(int argc, char** argv) {
  if (argc < 10) return 2;  // see the usage above
  const int type = atoi(argv[1]), wk = atoi(argv[2]), mt = atoi(argv[3]), stages = atoi(argv[4]);
  const bool bf16 = atoi(argv[5]);
  const int n = atoi(argv[6]), row_bytes = atoi(argv[7]), m = atoi(argv[8]), k = atoi(argv[9]);
  // 16-byte aligned like device allocations
  std::vector<uint8_t> weights(size_t(n) * row_bytes + 32), xs(size_t(m) * k * 2 + 32);
  uint8_t* w = weights.data() + (16 - reinterpret_cast<uintptr_t>(weights.data()) % 16);
  uint8_t* x = xs.data() + (16 - reinterpret_cast<uintptr_t>(xs.data()) % 16);
  if (fread(w, 1, size_t(n) * row_bytes, stdin) != size_t(n) * row_bytes) return 4;
  if (fread(x, 1, size_t(m) * k * 2, stdin) != size_t(m) * k * 2) return 4;
  return bf16 ? run_type(type, wk, mt, stages, w, reinterpret_cast<const __nv_bfloat16*>(x), n,
                         row_bytes, m)
              : run_type(type, wk, mt, stages, w, reinterpret_cast<const __half*>(x), n,
                         row_bytes, m);
}
