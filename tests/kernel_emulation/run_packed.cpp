// Runs cuda/gemv_packed.cuh (one row of repacked Q4_0 on x rounded beforehand) on the CPU;
// built and driven by tests/test_gemv_packed.py. Usage (the packed rows, then round_x's
// buffer, on stdin):
//   run_packed WARPS PASS ACT BF16 CTAS N ROW_BYTES > y
// ACT 1 (SiLU) or 2 (GELU tanh): the gated mode, N rows of gate then up, N / 2 outputs. BF16=1:
// y in bfloat16 (else float32).
#include "prelude.cuh"
#include "decode.h"
#include "formats.h"
#include "memory_on_cpu.h"
#include "launch_on_cpu.h"
#include "kernels.cuh"
#include "gemv_int8.cuh"
#include "gemv_packed.cuh"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

template <class T, int ACT>
int run(int warps, int pass, int ctas, const uint8_t* w, const uint8_t* xr, int n,
        int row_bytes) {
  std::vector<T> y(ACT ? n / 2 : n);
  std::memset(y.data(), 0xFF, y.size() * sizeof(T));  // NaN in float32 and bfloat16
  auto go = [&](auto kernel) {
    launch(ctas, warps * 32, [&] { kernel(w, xr, y.data(), n, row_bytes); });
  };
  // the tilings the tests use: the defaults (library.PACKED_TILINGS) and a small one
  if (warps == 8 && pass == 4) go(vx::gemv_packed<T, 8, 4, ACT>);
  else if (warps == 4 && pass == 4) go(vx::gemv_packed<T, 4, 4, ACT>);
  else if (warps == 8 && pass == 7) go(vx::gemv_packed<T, 8, 7, ACT>);
  else if (warps == 2 && pass == 3) go(vx::gemv_packed<T, 2, 3, ACT>);
  else return 3;
  fwrite(y.data(), sizeof(T), y.size(), stdout);
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 8) return 2;  // see the usage above
  const int warps = atoi(argv[1]), pass = atoi(argv[2]), act = atoi(argv[3]);
  const bool bf16 = atoi(argv[4]);
  const int ctas = atoi(argv[5]), n = atoi(argv[6]), row_bytes = atoi(argv[7]);
  if (row_bytes % 576) return 5;
  const int k = row_bytes / 576 * 1024;
  // 16-byte aligned like device allocations
  std::vector<uint8_t> weights(size_t(n) * row_bytes + 32), rounded(size_t(k) * 5 / 4 + 32);
  uint8_t* w = weights.data() + (16 - reinterpret_cast<uintptr_t>(weights.data()) % 16);
  uint8_t* xr = rounded.data() + (16 - reinterpret_cast<uintptr_t>(rounded.data()) % 16);
  if (fread(w, 1, size_t(n) * row_bytes, stdin) != size_t(n) * row_bytes) return 4;
  if (fread(xr, 1, size_t(k) * 5 / 4, stdin) != size_t(k) * 5 / 4) return 4;
  switch (act) {
    case 0: return bf16 ? run<__nv_bfloat16, 0>(warps, pass, ctas, w, xr, n, row_bytes)
                        : run<float, 0>(warps, pass, ctas, w, xr, n, row_bytes);
    case 1: return bf16 ? run<__nv_bfloat16, 1>(warps, pass, ctas, w, xr, n, row_bytes)
                        : run<float, 1>(warps, pass, ctas, w, xr, n, row_bytes);
    case 2: return bf16 ? run<__nv_bfloat16, 2>(warps, pass, ctas, w, xr, n, row_bytes)
                        : run<float, 2>(warps, pass, ctas, w, xr, n, row_bytes);
  }
  return 2;
}
