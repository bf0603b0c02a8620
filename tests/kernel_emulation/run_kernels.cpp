// Runs the CUDA GGUF kernels (vexel_core/quant/kernels) on the CPU; built and driven by
// tests/test_quant_kernels.py. Usage (raw blocks, then the activations, on stdin):
//   run_kernels gemv GGML_TYPE MT ROWS WARPS STAGES N ROW_BYTES M SKIP_ROWS BF16  > y
//   run_kernels dequant GGML_TYPE N ROW_BYTES SKIP_ROWS                           > W
//   run_kernels gemv_int8 GGML_TYPE WARPS STAGES PER_LANE CTAS N ROW_BYTES SKIP_ROWS BF16 XREG [ACT [OFFSET [XPRE [XROWS]]]] > y
//   run_kernels round_x K BF16 CTAS                                               > rounded x
//   run_kernels gemv_int8_norm GGML_TYPE WARPS STAGES PER_LANE CTAS N ROW_BYTES SKIP_ROWS BF16 EPS
//     (stdin: the blocks, x [K], the residual [N], the norm's weight [N]) > h, normed, twice
//     (two launches on one scratch), then scratch's count (uint32) after them
//   (one x row; CTAS as Int8Tiling.grid gives them; XREG 1: x held in registers; ACT 1 (SiLU)
//   or 2 (GELU tanh): the gated mode, N rows of gate then up, N / 2 outputs; OFFSET: bytes by
//   which the buffer starts past 16-byte alignment, 0 by default; XPRE 1 or 2: x is round_x's
//   buffer (K + K / 4 bytes) instead, copied into shared memory or read where it is, and y
//   bfloat16 (BF16 1; two-warp tilings, ACT 0 or 1); XROWS 3: three activation rows (x [3, K],
//   y [3, outputs]; the default tilings, ACT 0 or 1). round_x: CTAS of ROUND_X_THREADS threads.)
// GGML_TYPE 1002: Q4_0 packed (formats.h, Q4_0x1024). SKIP_ROWS rows of the input precede
// the weight, so it starts off 16-byte alignment (except packed rows, whole 16-byte words).
// BF16=1: activations and y in bfloat16 (else float32, as W always is).
#include "prelude.cuh"
#include "decode.h"
#include "formats.h"
#include "memory_on_cpu.h"
#include "launch_on_cpu.h"
#include "kernels.cuh"
#include "gemv_int8.cuh"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

template <class F, class T, int MT, int ROWS, int WARPS, int STAGES>
void gemv(const uint8_t* w, const T* x, T* y, int n, int row_bytes, int m) {
  const int ctas = (n + ROWS - 1) / ROWS * ((m + MT - 1) / MT);
  launch(ctas, WARPS * 32, [&] { vx::gemv<F, T, MT, ROWS, WARPS, STAGES>(w, x, y, n, row_bytes, m); });
}

// Activations of type T: read them, run the tiling asked for, write y.
template <class F, class T>
int run_gemv(char** argv, const uint8_t* w, int n, int row_bytes, int m, int k) {
  std::vector<T> x(size_t(m) * k), y(size_t(m) * n);
  std::memset(y.data(), 0xFF, y.size() * sizeof(T));  // NaN in float32 and bfloat16
  if (fread(x.data(), sizeof(T), x.size(), stdin) != x.size()) return 4;
  const int mt = atoi(argv[3]), rows = atoi(argv[4]), warps = atoi(argv[5]), stages = atoi(argv[6]);
  T* out = y.data();
  // The tilings the tests use: four warps at tiles 1, 4 and 8, CUDA's default for one row
  // (two warps), and two unusual ones.
  if (mt == 1 && rows == 4 && warps == 4 && stages == 2) gemv<F, T, 1, 4, 4, 2>(w, x.data(), out, n, row_bytes, m);
  else if (mt == 4 && rows == 4 && warps == 4 && stages == 2) gemv<F, T, 4, 4, 4, 2>(w, x.data(), out, n, row_bytes, m);
  else if (mt == 8 && rows == 4 && warps == 4 && stages == 2) gemv<F, T, 8, 4, 4, 2>(w, x.data(), out, n, row_bytes, m);
  else if (mt == 1 && rows == 4 && warps == 2 && stages == 2) gemv<F, T, 1, 4, 2, 2>(w, x.data(), out, n, row_bytes, m);
  else if (mt == 1 && rows == 1 && warps == 2 && stages == 3) gemv<F, T, 1, 1, 2, 3>(w, x.data(), out, n, row_bytes, m);
  else if (mt == 2 && rows == 8 && warps == 8 && stages == 1) gemv<F, T, 2, 8, 8, 1>(w, x.data(), out, n, row_bytes, m);
  else return 3;
  fwrite(y.data(), sizeof(T), y.size(), stdout);
  return 0;
}

// One activation row through gemv_int8 with the tiling asked for (x's copy: up to 16,384
// values, INT8_MAX_COLS).
struct alignas(16) Word16 {  // buffers 16-byte aligned as MLX allocates them
  uint8_t bytes[16];
};

// gemv_int8 on x rounded beforehand (XPRE 1: copied into shared memory, 2: read where it is):
// round_x's buffer from stdin, 16-byte aligned as MLX allocates it.
template <int TYPE, int ACT>
int run_gemv_int8_xpre(char** argv, const uint8_t* w, int n, int row_bytes, int k, int xpre,
                       std::vector<__nv_bfloat16>& y) {
  constexpr int KCAP = 16384;
  using T = __nv_bfloat16;
  std::vector<Word16> words((k + k / 4 + 15) / 16);
  uint8_t* x = reinterpret_cast<uint8_t*>(words.data());
  if (fread(x, 1, k + k / 4, stdin) != size_t(k + k / 4)) return 4;
  const int warps = atoi(argv[3]), stages = atoi(argv[4]), per_lane = atoi(argv[5]);
  const int grid = atoi(argv[6]);
  const bool held = atoi(argv[11]);
  auto run = [&](auto kernel) {
    launch(grid, warps * 32, [&] {
      kernel(w, x, y.data(), n, row_bytes, int(blockIdx.x), int(gridDim.x));
    });
  };
#define VX_INT8_XPRE(W, S, P, H) \
  else if (held == H && warps == W && stages == S && per_lane == P && xpre == 1) \
    run(vx::gemv_int8<TYPE, T, W, S, P, KCAP, H, ACT, 1, 1, uint8_t>); \
  else if (held == H && warps == W && stages == S && per_lane == P && xpre == 2) \
    run(vx::gemv_int8<TYPE, T, W, S, P, 0, H, ACT, 2, 1, uint8_t>);
  if (false) {}
  VX_INT8_XPRE(2, 2, 1, false) VX_INT8_XPRE(2, 2, 2, false) VX_INT8_XPRE(2, 2, 4, false)
  VX_INT8_XPRE(2, 2, 4, true)
  else return 3;
#undef VX_INT8_XPRE
  fwrite(y.data(), sizeof(T), y.size(), stdout);
  return 0;
}

template <int TYPE, class T, int ACT>
int run_gemv_int8(char** argv, const uint8_t* w, int n, int row_bytes, int k) {
  constexpr int KCAP = 16384;
  if (k > KCAP) return 5;
  const int xpre = argv[12] && argv[13] && argv[14] ? atoi(argv[14]) : 0;
  const int xrows = argv[12] && argv[13] && argv[14] && argv[15] ? atoi(argv[15]) : 1;
  std::vector<T> x(size_t(xrows) * k), y(size_t(xrows) * (ACT ? n / 2 : n));
  std::memset(y.data(), 0xFF, y.size() * sizeof(T));  // NaN in float32 and bfloat16
  if (!xpre && fread(x.data(), sizeof(T), x.size(), stdin) != x.size()) return 4;
  const int warps = atoi(argv[3]), stages = atoi(argv[4]), per_lane = atoi(argv[5]);
  const int grid = atoi(argv[6]);
  const bool held = atoi(argv[11]);
  auto run = [&](auto kernel) {
    launch(grid, warps * 32, [&] {
      kernel(w, x.data(), y.data(), n, row_bytes, int(blockIdx.x), int(gridDim.x));
    });
  };
  // The tilings the tests use: the defaults, two CTAs of two warps, and the (warps, stages,
  // sub-blocks a lane) of benchmarks/int8_sweep.py's candidates; gated, the defaults
  // (library.INT8_TILINGS) and two CTAs of two warps.
#define VX_INT8_TILING(W, S, P) \
  else if (!held && warps == W && stages == S && per_lane == P) \
    run(vx::gemv_int8<TYPE, T, W, S, P, KCAP, false, ACT>);
#define VX_INT8_HELD(W, S, P) \
  else if (held && warps == W && stages == S && per_lane == P) \
    run(vx::gemv_int8<TYPE, T, W, S, P, KCAP, true, ACT>);
  if (xpre) {  // x rounded beforehand: the tests' few tilings, bfloat16's y, ACT 0 and 1 alone
    if constexpr (std::is_same_v<T, __nv_bfloat16> && ACT < 2) {
      return run_gemv_int8_xpre<TYPE, ACT>(argv, w, n, row_bytes, k, xpre, y);
    }
    return 3;
  }
  // three activation rows: the default tilings (library.INT8_TILINGS), ACT 0 and 1
#define VX_INT8_ROWS(W, S, P) \
  else if (warps == W && stages == S && per_lane == P) \
    run(vx::gemv_int8<TYPE, T, W, S, P, KCAP, false, ACT, 0, 3>);
  if (xrows != 1) {
    if constexpr (ACT < 2) {
      if (held || xrows != 3) return 3;
      VX_INT8_ROWS(4, 2, 4) VX_INT8_ROWS(8, 2, 4) VX_INT8_ROWS(4, 4, 2) VX_INT8_ROWS(8, 3, 1)
      else return 3;
      fwrite(y.data(), sizeof(T), y.size(), stdout);
      return 0;
    }
    return 3;
  }
#undef VX_INT8_ROWS
  if constexpr (ACT == 0) {
    if (false) {}
    VX_INT8_TILING(8, 3, 1) VX_INT8_TILING(8, 3, 2) VX_INT8_TILING(2, 2, 1) VX_INT8_TILING(2, 2, 2)
    VX_INT8_TILING(8, 4, 1) VX_INT8_TILING(8, 4, 2) VX_INT8_TILING(8, 2, 2) VX_INT8_TILING(8, 2, 4)
    VX_INT8_TILING(4, 2, 2) VX_INT8_TILING(4, 3, 1) VX_INT8_TILING(4, 3, 2) VX_INT8_TILING(4, 4, 1)
    VX_INT8_TILING(4, 4, 2) VX_INT8_TILING(4, 2, 4) VX_INT8_TILING(4, 3, 4) VX_INT8_TILING(4, 4, 4)
    VX_INT8_TILING(8, 3, 4) VX_INT8_TILING(7, 3, 4) VX_INT8_TILING(8, 4, 4) VX_INT8_TILING(6, 4, 4)
    VX_INT8_TILING(6, 3, 4) VX_INT8_TILING(6, 2, 4)
    VX_INT8_HELD(8, 2, 4) VX_INT8_HELD(7, 3, 4) VX_INT8_HELD(4, 3, 4) VX_INT8_HELD(2, 2, 4)
    VX_INT8_HELD(4, 2, 4)
    else return 3;
  } else {
    if (false) {}
    VX_INT8_TILING(4, 2, 4) VX_INT8_TILING(8, 2, 4) VX_INT8_TILING(4, 4, 2) VX_INT8_TILING(8, 3, 1)
    VX_INT8_TILING(2, 2, 1) VX_INT8_TILING(2, 2, 2)
    VX_INT8_HELD(2, 2, 4)
    else return 3;
  }
#undef VX_INT8_TILING
#undef VX_INT8_HELD
  fwrite(y.data(), sizeof(T), y.size(), stdout);
  return 0;
}

// gemv_int8 with the AddNorm epilogue (gemv_int8_norm.cu), launched twice on one scratch:
// the second launch finds the count the first left
template <int TYPE, class T>
int run_gemv_int8_norm(char** argv, const uint8_t* w, int n, int row_bytes, int k) {
  constexpr int KCAP = 16384;
  if (k > KCAP) return 5;
  std::vector<T> x(k), residual(n), nw(n);
  for (auto* part : {&x, &residual, &nw}) {
    if (fread(part->data(), sizeof(T), part->size(), stdin) != part->size()) return 4;
  }
  const int warps = atoi(argv[3]), stages = atoi(argv[4]), per_lane = atoi(argv[5]);
  const int grid = atoi(argv[6]);
  const float eps = float(atof(argv[11]));
  std::vector<uint32_t> scratch(1 + grid, 0u);
  // h, normed, h, normed: each 16-byte aligned, as MLX allocates outputs
  std::vector<std::vector<Word16>> out(4, std::vector<Word16>((n * sizeof(T) + 15) / 16));
  for (auto& o : out) std::memset(o.data(), 0xFF, o.size() * 16);  // NaN in float32 and bfloat16
  auto buffer = [&](int i) { return reinterpret_cast<T*>(out[i].data()); };
  auto run = [&]<int W>(auto kernel) {
    for (int pass = 0; pass < 2; ++pass) {
      vx::AddNorm<T> e{residual.data(), nw.data(), eps, buffer(2 * pass),
                       buffer(2 * pass + 1), scratch.data()};
      launch(grid, W * 32, [&] {
        vx::AddNorm<T> mine = e;  // each thread's own, as in the kernel's body
        kernel(w, x.data(), &mine, n, row_bytes, int(blockIdx.x), int(gridDim.x));
        vx::add_norm_finish<W>(mine, n);
      });
    }
  };
#define VX_INT8_NORM(W, S, P) \
  else if (warps == W && stages == S && per_lane == P) \
    run.template operator()<W>(vx::gemv_int8<TYPE, T, W, S, P, KCAP, false, 0, 0, 1, T, vx::AddNorm<T>*>);
  if (false) {}
  VX_INT8_NORM(4, 2, 4) VX_INT8_NORM(8, 2, 4) VX_INT8_NORM(4, 4, 2) VX_INT8_NORM(2, 2, 1)
  VX_INT8_NORM(2, 2, 2)
  else return 3;
#undef VX_INT8_NORM
  for (int i = 0; i < 4; ++i) fwrite(buffer(i), sizeof(T), n, stdout);
  fwrite(scratch.data(), 4, 1, stdout);
  return 0;
}

template <int TYPE>
int run_int8(char** argv) {
  const int n = atoi(argv[7]), row_bytes = atoi(argv[8]), skip = atoi(argv[9]);
  using F = typename vx::FormatOf<TYPE>::type;
  const int offset = argv[12] && argv[13] ? atoi(argv[13]) : 0;
  std::vector<uint8_t> buffer(size_t(n + skip) * row_bytes + 64);
  uint8_t* raw = buffer.data() + 16 + offset;
  if (fread(raw, 1, size_t(n + skip) * row_bytes, stdin) != size_t(n + skip) * row_bytes) return 4;
  const uint8_t* w = raw + size_t(skip) * row_bytes;
  const int k = row_bytes / F::BB * F::BE;
  const bool bf16 = atoi(argv[10]);
  if (std::string(argv[1]) == "gemv_int8_norm") {
    return bf16 ? run_gemv_int8_norm<TYPE, __nv_bfloat16>(argv, w, n, row_bytes, k)
                : run_gemv_int8_norm<TYPE, float>(argv, w, n, row_bytes, k);
  }
  switch (argv[12] ? atoi(argv[12]) : 0) {  // ACT (after XREG, argv[11])
    case 0: return bf16 ? run_gemv_int8<TYPE, __nv_bfloat16, 0>(argv, w, n, row_bytes, k)
                        : run_gemv_int8<TYPE, float, 0>(argv, w, n, row_bytes, k);
    case 1: return bf16 ? run_gemv_int8<TYPE, __nv_bfloat16, 1>(argv, w, n, row_bytes, k)
                        : run_gemv_int8<TYPE, float, 1>(argv, w, n, row_bytes, k);
    case 2: return bf16 ? run_gemv_int8<TYPE, __nv_bfloat16, 2>(argv, w, n, row_bytes, k)
                        : run_gemv_int8<TYPE, float, 2>(argv, w, n, row_bytes, k);
  }
  return 2;
}

template <class F>
void dequant(const uint8_t* w, float* out, int n, int row_bytes) {
  const int chunks = (row_bytes / F::BB + vx::Chunk<F>::BLOCKS - 1) / vx::Chunk<F>::BLOCKS;
  launch((n * chunks + 3) / 4, 128, [&] { vx::dequant<F, float, 4>(w, out, n, row_bytes); });
}

template <class F>
int run(char** argv, bool is_gemv) {
  const int n = atoi(argv[is_gemv ? 7 : 3]), row_bytes = atoi(argv[is_gemv ? 8 : 4]);
  const int m = is_gemv ? atoi(argv[9]) : 0, skip = atoi(argv[is_gemv ? 10 : 5]);
  const int k = row_bytes / F::BB * F::BE;
  // 16-byte aligned like a device allocation, with room for the covering words around it.
  std::vector<uint8_t> buffer(size_t(n + skip) * row_bytes + 64);
  uint8_t* raw = buffer.data() + 16;
  if (fread(raw, 1, size_t(n + skip) * row_bytes, stdin) != size_t(n + skip) * row_bytes) return 4;
  const uint8_t* w = raw + size_t(skip) * row_bytes;
  if (!is_gemv) {
    std::vector<float> out(size_t(n) * k, NAN);
    dequant<F>(w, out.data(), n, row_bytes);
    fwrite(out.data(), 4, out.size(), stdout);
    return 0;
  }
  return atoi(argv[11]) ? run_gemv<F, __nv_bfloat16>(argv, w, n, row_bytes, m, k)
                        : run_gemv<F, float>(argv, w, n, row_bytes, m, k);
}

// x rounded as gemv_int8's XPRE modes read it (round_x), in CTAs of ROUND_X_THREADS
template <class T>
int run_round_x(int k, int ctas) {
  constexpr int ROUND_X_THREADS = 64;  // library.ROUND_X_THREADS
  std::vector<T> x(k);
  if (fread(x.data(), sizeof(T), x.size(), stdin) != x.size()) return 4;
  std::vector<Word16> words((k + k / 4 + 15) / 16);
  std::memset(words.data(), 0xFF, words.size() * 16);  // poisoned
  uint8_t* out = reinterpret_cast<uint8_t*>(words.data());
  launch(ctas, ROUND_X_THREADS, [&] { vx::round_x<T, ROUND_X_THREADS>(x.data(), out, k); });
  fwrite(out, 1, k + k / 4, stdout);
  return 0;
}

int main(int argc, char** argv) {
  if (std::string(argv[1] ? argv[1] : "") == "round_x" && argc == 5) {
    const int k = atoi(argv[2]), ctas = atoi(argv[4]);
    return atoi(argv[3]) ? run_round_x<__nv_bfloat16>(k, ctas) : run_round_x<float>(k, ctas);
  }
  if (argc < 6) return 2;  // see the usage above
  if (std::string(argv[1]) == "gemv_int8" || std::string(argv[1]) == "gemv_int8_norm") {
    if (argc < 12) return 2;  // XREG (gemv_int8) or EPS (gemv_int8_norm) is argv[11]
    switch (atoi(argv[2])) {
      case 2: return run_int8<2>(argv);
      case 3: return run_int8<3>(argv);
      case 6: return run_int8<6>(argv);
      case 7: return run_int8<7>(argv);
      case 8: return run_int8<8>(argv);
      case 12: return run_int8<12>(argv);
      case 13: return run_int8<13>(argv);
      case 14: return run_int8<14>(argv);
      case 1002: return run_int8<1002>(argv);  // Q4_0 packed (formats.h, Q4_0x1024)
    }
    return 1;
  }
  const bool is_gemv = std::string(argv[1]) == "gemv";
  switch (atoi(argv[2])) {
    case 2: return run<vx::Q4_0>(argv, is_gemv);
    case 3: return run<vx::Q4_1>(argv, is_gemv);
    case 6: return run<vx::Q5_0>(argv, is_gemv);
    case 7: return run<vx::Q5_1>(argv, is_gemv);
    case 8: return run<vx::Q8_0>(argv, is_gemv);
    case 10: return run<vx::Q2_K>(argv, is_gemv);
    case 11: return run<vx::Q3_K>(argv, is_gemv);
    case 12: return run<vx::Q4_K>(argv, is_gemv);
    case 13: return run<vx::Q5_K>(argv, is_gemv);
    case 14: return run<vx::Q6_K>(argv, is_gemv);
    case 1002: return run<vx::Q4_0x1024>(argv, is_gemv);
  }
  return 1;
}
