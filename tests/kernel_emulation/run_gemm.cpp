// Runs cuda/gemm_packed.cuh (a few activation rows times repacked Q4_0, on the tensor cores) on
// the CPU; built and driven by tests/test_gemm_packed.py. Usage (the packed rows, then x's bits,
// on stdin):
//   run_gemm WN WK NT MT AHEAD ACT BF16 N ROW_BYTES M > y
// BF16=1: x and y in bfloat16, else float16. ACT 1 (SiLU) or 2 (GELU tanh): the gated mode, N
// rows of gate then up, N / 2 outputs a row.
#include "prelude.cuh"
#include "decode.h"
#include "formats.h"
#include "memory_on_cpu.h"
#include "launch_on_cpu.h"
#include "kernels.cuh"
#include "gemv_int8.cuh"
#include "gemv_packed.cuh"
#include "gemm_packed.cuh"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

template <class T, int ACT>
int run(int wn, int wk, int nt, int mt, int ahead, const uint8_t* w, const T* x, int n,
        int row_bytes, int m) {
  const int outs = ACT ? n / 2 : n;
  std::vector<T> y(size_t(m) * outs);
  std::memset(y.data(), 0xFF, y.size() * sizeof(T));  // NaN in bfloat16 and float16
  const int ctas = (outs + 16 * nt * wn - 1) / (16 * nt * wn) * ((m + mt - 1) / mt);
  auto go = [&](auto kernel) {
    launch(ctas, wn * wk * 32, [&] { kernel(w, x, y.data(), n, row_bytes, m); });
  };
  // the tilings the tests use: the library's defaults (1 x 4 warps, one or two row tiles; 1 x 8
  // with two), 2 x 4, and awkward ones: three k-slices (rounds not a multiple), one warp with
  // two tiles of x rows, two row tiles
  auto is = [&](int a, int b, int c, int d, int e) {
    return wn == a && wk == b && nt == c && mt == d && ahead == e;
  };
  if (is(1, 4, 1, 8, 4)) go(vx::gemm_packed<T, 1, 4, 1, 8, 4, ACT>);
  else if (is(1, 4, 1, 16, 4)) go(vx::gemm_packed<T, 1, 4, 1, 16, 4, ACT>);
  else if (is(1, 4, 2, 16, 4)) go(vx::gemm_packed<T, 1, 4, 2, 16, 4, ACT>);
  else if (is(1, 8, 2, 8, 4)) go(vx::gemm_packed<T, 1, 8, 2, 8, 4, ACT>);
  else if (is(1, 8, 2, 16, 4)) go(vx::gemm_packed<T, 1, 8, 2, 16, 4, ACT>);
  else if (is(2, 4, 1, 16, 4)) go(vx::gemm_packed<T, 2, 4, 1, 16, 4, ACT>);
  else if (is(4, 2, 2, 16, 3)) go(vx::gemm_packed<T, 4, 2, 2, 16, 3, ACT>);
  else if (is(1, 1, 1, 32, 4)) go(vx::gemm_packed<T, 1, 1, 1, 32, 4, ACT>);
  else if (is(1, 3, 2, 16, 2)) go(vx::gemm_packed<T, 1, 3, 2, 16, 2, ACT>);
  else return 3;
  fwrite(y.data(), sizeof(T), y.size(), stdout);
  return 0;
}

template <class T>
int run_act(int act, int wn, int wk, int nt, int mt, int ahead, const uint8_t* w, const T* x,
            int n, int row_bytes, int m) {
  switch (act) {
    case 0: return run<T, 0>(wn, wk, nt, mt, ahead, w, x, n, row_bytes, m);
    case 1: return run<T, 1>(wn, wk, nt, mt, ahead, w, x, n, row_bytes, m);
    case 2: return run<T, 2>(wn, wk, nt, mt, ahead, w, x, n, row_bytes, m);
  }
  return 2;
}

int main(int argc, char** argv) {
  if (argc < 11) return 2;  // see the usage above
  const int wn = atoi(argv[1]), wk = atoi(argv[2]), nt = atoi(argv[3]), mt = atoi(argv[4]);
  const int ahead = atoi(argv[5]), act = atoi(argv[6]);
  const bool bf16 = atoi(argv[7]);
  const int n = atoi(argv[8]), row_bytes = atoi(argv[9]), m = atoi(argv[10]);
  if (row_bytes % 576) return 5;
  const int k = row_bytes / 576 * 1024;
  // 16-byte aligned like device allocations
  std::vector<uint8_t> weights(size_t(n) * row_bytes + 32), xs(size_t(m) * k * 2 + 32);
  uint8_t* w = weights.data() + (16 - reinterpret_cast<uintptr_t>(weights.data()) % 16);
  uint8_t* x = xs.data() + (16 - reinterpret_cast<uintptr_t>(xs.data()) % 16);
  if (fread(w, 1, size_t(n) * row_bytes, stdin) != size_t(n) * row_bytes) return 4;
  if (fread(x, 1, size_t(m) * k * 2, stdin) != size_t(m) * k * 2) return 4;
  return bf16 ? run_act(act, wn, wk, nt, mt, ahead, w, reinterpret_cast<const __nv_bfloat16*>(x),
                        n, row_bytes, m)
              : run_act(act, wn, wk, nt, mt, ahead, w, reinterpret_cast<const __half*>(x), n,
                        row_bytes, m);
}
