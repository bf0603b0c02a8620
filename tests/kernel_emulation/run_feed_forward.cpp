// Runs cuda/feed_forward.cuh (a block's gated feed-forward part for one row) on the CPU, twice
// on one scratch; built and driven by tests/test_feed_forward.py. Usage (stdin: the packed
// gate/up rows, the packed down rows, x [K], the residual [N], the norm's weight [N]):
//   run_feed_forward ACT BF16 K F N EPS > h, normed, h, normed, then the number of nonzero
//   words among the scratch's counts and flags (uint32)
//   run_feed_forward words F > the scratch's uint32 words for F intermediate values, then the
//   offsets of the words each launch leaves zero (the AddNorm count, then done to the last
//   slice's flag: first and one past the last)
// ACT 1 SiLU, 2 GELU tanh; BF16=1: activations in bfloat16 (else float32). (K, F): the
// instantiated shapes below.
#include "prelude.cuh"
#include "decode.h"
#include "formats.h"
#include "memory_on_cpu.h"
#include "launch_on_cpu.h"
#include "kernels.cuh"
#include "gemv_int8.cuh"
#include "gemv_packed.cuh"
#include "feed_forward.cuh"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

// a buffer of n T, 16-byte aligned like device allocations, filled from stdin (or NaN)
template <class T>
T* aligned(std::vector<uint8_t>& store, size_t n, bool from_stdin) {
  store.assign(n * sizeof(T) + 16, 0xFF);  // NaN in float32 and bfloat16
  T* p = reinterpret_cast<T*>(store.data() + (16 - reinterpret_cast<uintptr_t>(store.data()) % 16));
  if (from_stdin && fread(p, sizeof(T), n, stdin) != n) return nullptr;
  return p;
}

// The end of the words each launch leaves zero from sc.done on (done, claims, a flag a slice)
const uint32_t* counts_end(const vx::FeedForwardScratch& sc, int f) {
  return sc.claimed + f / vx::FF_SLICE;
}

template <class T, int ACT, int K, int F>
int run(int n, float eps) {
  std::vector<uint8_t> a, b, c, d, e, s, out[4];
  const uint8_t* wgu = aligned<uint8_t>(a, size_t(2 * F) * (K / 1024 * 576), true);
  const uint8_t* wd = aligned<uint8_t>(b, size_t(n) * (F / 1024 * 576), true);
  const T* x = aligned<T>(c, K, true);
  const T* residual = aligned<T>(d, n, true);
  const T* nw = aligned<T>(e, n, true);
  if (!wgu || !wd || !x || !residual || !nw) return 4;
  const int words = vx::FeedForwardScratch::words(F);
  uint32_t* scratch = aligned<uint32_t>(s, words, false);
  for (int i = 0; i < words; ++i) scratch[i] = 0;
  for (int run = 0; run < 2; ++run) {
    T* h = aligned<T>(out[2 * run], n, false);
    T* normed = aligned<T>(out[2 * run + 1], n, false);
    launch(F / vx::FF_SLICE, vx::FF_WARPS * 32, [&] {
      vx::feed_forward<T, ACT, K, F>(wgu, wd, x, residual, nw, eps, scratch, h, normed, n);
    });
    fwrite(h, sizeof(T), n, stdout);
    fwrite(normed, sizeof(T), n, stdout);
  }
  // the counts and flags (the CTAs' sums of squares and the rounded values stay, as on the GPU)
  const vx::FeedForwardScratch sc(scratch, F / vx::FF_SLICE);
  uint32_t nonzero = *sc.norm != 0;
  for (const uint32_t* w = sc.done; w < counts_end(sc, F); ++w) nonzero += *w != 0;
  fwrite(&nonzero, 4, 1, stdout);
  return 0;
}

template <class T, int ACT>
int shape(int k, int f, int n, float eps) {
  if (k == 1024 && f == 1024) return run<T, ACT, 1024, 1024>(n, eps);
  if (k == 1024 && f == 2048) return run<T, ACT, 1024, 2048>(n, eps);
  if (k == 2048 && f == 1024) return run<T, ACT, 2048, 1024>(n, eps);
  return 3;
}

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "words") {  // the scratch's size for F = argv[2]
    const int f = atoi(argv[2]), words = vx::FeedForwardScratch::words(f);
    std::vector<uint32_t> scratch(words);
    uint32_t* base = scratch.data();
    const vx::FeedForwardScratch sc(base, f / vx::FF_SLICE);
    printf("%d %d %d %d\n", words, int(sc.norm - base), int(sc.done - base),
           int(counts_end(sc, f) - base));
    return 0;
  }
  if (argc < 7) return 2;  // see the usage above
  const int act = atoi(argv[1]), bf16 = atoi(argv[2]);
  const int k = atoi(argv[3]), f = atoi(argv[4]), n = atoi(argv[5]);
  const float eps = float(atof(argv[6]));
  if (f % 1024) return 5;
  if (act == 1) return bf16 ? shape<__nv_bfloat16, 1>(k, f, n, eps) : shape<float, 1>(k, f, n, eps);
  if (act == 2) return bf16 ? shape<__nv_bfloat16, 2>(k, f, n, eps) : shape<float, 2>(k, f, n, eps);
  return 2;
}
