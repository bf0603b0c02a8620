// Runs cuda/gemm_packed.cuh (a few activation rows times repacked Q4_0, on the tensor cores) on
// the CPU; built and driven by tests/test_gemm_packed.py. Usage (the packed rows, then x's bits,
// on stdin):
//   run_gemm WARPS NT MT AHEAD BF16 N ROW_BYTES M > y
// BF16=1: x and y in bfloat16, else float16.
#include "prelude.cuh"
#include "decode.h"
#include "formats.h"
#include "memory_on_cpu.h"
#include "launch_on_cpu.h"
#include "gemm_packed.cuh"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

template <class T>
int run(int warps, int nt, int mt, int ahead, const uint8_t* w, const T* x, int n, int row_bytes,
        int m) {
  std::vector<T> y(size_t(m) * n);
  std::memset(y.data(), 0xFF, y.size() * sizeof(T));  // NaN in bfloat16 and float16
  const int ctas = (n + 8 * nt * warps - 1) / (8 * nt * warps) * ((m + mt - 1) / mt);
  auto go = [&](auto kernel) {
    launch(ctas, warps * 32, [&] { kernel(w, x, y.data(), n, row_bytes, m); });
  };
  // the tilings the tests use: the library's (4 warps, one tile of rows, 16/32/64 activation
  // rows, four rounds ahead) and an awkward one
  if (warps == 4 && nt == 1 && mt == 16 && ahead == 4) go(vx::gemm_packed<T, 4, 1, 16, 4>);
  else if (warps == 4 && nt == 1 && mt == 32 && ahead == 4) go(vx::gemm_packed<T, 4, 1, 32, 4>);
  else if (warps == 4 && nt == 1 && mt == 64 && ahead == 4) go(vx::gemm_packed<T, 4, 1, 64, 4>);
  else if (warps == 2 && nt == 2 && mt == 32 && ahead == 3) go(vx::gemm_packed<T, 2, 2, 32, 3>);
  else return 3;
  fwrite(y.data(), sizeof(T), y.size(), stdout);
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 9) return 2;  // see the usage above
  const int warps = atoi(argv[1]), nt = atoi(argv[2]), mt = atoi(argv[3]), ahead = atoi(argv[4]);
  const bool bf16 = atoi(argv[5]);
  const int n = atoi(argv[6]), row_bytes = atoi(argv[7]), m = atoi(argv[8]);
  if (row_bytes % 576) return 5;
  const int k = row_bytes / 576 * 1024;
  // 16-byte aligned like device allocations
  std::vector<uint8_t> weights(size_t(n) * row_bytes + 32), xs(size_t(m) * k * 2 + 32);
  uint8_t* w = weights.data() + (16 - reinterpret_cast<uintptr_t>(weights.data()) % 16);
  uint8_t* x = xs.data() + (16 - reinterpret_cast<uintptr_t>(xs.data()) % 16);
  if (fread(w, 1, size_t(n) * row_bytes, stdin) != size_t(n) * row_bytes) return 4;
  if (fread(x, 1, size_t(m) * k * 2, stdin) != size_t(m) * k * 2) return 4;
  return bf16 ? run(warps, nt, mt, ahead, w, reinterpret_cast<const __nv_bfloat16*>(x), n,
                    row_bytes, m)
              : run(warps, nt, mt, ahead, w, reinterpret_cast<const __half*>(x), n, row_bytes, m);
}
