// Runs the CUDA paged decode attention (vexel_core/attention/kernels/cuda/paged_decode.cu)
// on the CPU; built and driven by tests/test_attention_kernels.py. Usage:
//   run_attention B HQ HKV D N_BLOCKS BS NB BF16 SCALE SOFTCAP WINDOW SPLITS WARPS < in > out
// Inputs on stdin: q [B, HQ, D], k_pool and v_pool [N_BLOCKS * BS, HKV, D] (float32, or
// bfloat16 with BF16=1), tables [B, NB] and context lengths [B] (int32). Writes out [B, HQ, D];
// with SPLITS > 1 the spans go through paged_decode_merge.cu, as on the GPU.
#include "attention_on_cpu.h"
#include "launch_on_cpu.h"

#include <cstdio>
#include <cstdlib>
#include <vector>

constexpr bool PREFETCH = true;  // a hint, nothing to do on the CPU

template <class T, int D, int REP, int BS, int WARPS>
void body(const T* q, const T* k_pool, const T* v_pool, const int* tables, const int* ctx_lens,
          const float* fparams, const int* iparams, T* out, float* part,
          const int* k_pool_shape, const int* tables_shape) {
#include "paged_decode.cu"
}

template <class T, int D>
void merge_body(const float* part, T* out, const int* part_shape) {
#include "paged_decode_merge.cu"
}

template <class T, int D, int REP, int WARPS>
int run(int B, int hkv, int n_slots, int nb, float scale, float softcap, int window,
        int splits) {
  const int hq = hkv * REP;
  std::vector<T> q(size_t(B) * hq * D), k(size_t(n_slots) * hkv * D), v(k.size());
  std::vector<int> tables(size_t(B) * nb), ctx(B);
  std::vector<T> out(q.size());
  std::vector<float> part(size_t(B) * hq * splits * (2 + D));
  std::memset(out.data(), 0xFF, out.size() * sizeof(T));  // NaN in float32 and bfloat16
  std::memset(part.data(), 0xFF, part.size() * sizeof(float));
  for (auto* part : {&q, &k, &v}) {
    if (fread(part->data(), sizeof(T), part->size(), stdin) != part->size()) return 4;
  }
  if (fread(tables.data(), 4, tables.size(), stdin) != tables.size()) return 4;
  if (fread(ctx.data(), 4, ctx.size(), stdin) != ctx.size()) return 4;
  const float fparams[2] = {scale, softcap};
  const int iparams[2] = {window, splits};
  const int k_shape[3] = {n_slots, hkv, D}, t_shape[2] = {B, nb};
  launch(B * hkv * splits, WARPS * 32, [&] {
    body<T, D, REP, 16, WARPS>(q.data(), k.data(), v.data(), tables.data(), ctx.data(), fparams,
                        iparams, out.data(), part.data(), k_shape, t_shape);
  });
  if (splits > 1) {
    const int p_shape[4] = {B, hq, splits, 2 + D};
    const int threads = 256;
    launch((B * hq * D + threads - 1) / threads, threads, [&] {
      blockDim.x = threads;
      merge_body<T, D>(part.data(), out.data(), p_shape);
    });
  }
  fwrite(out.data(), sizeof(T), out.size(), stdout);
  return 0;
}

// The (D, REP) combinations the tests use, at each warp count the launcher chooses among.
template <class T, int WARPS>
int dispatch(int d, int rep, int B, int hkv, int n_slots, int nb, float scale, float softcap,
             int window, int splits) {
#define VX_CASE(D_, REP_)   \
  if (d == D_ && rep == REP_) \
    return run<T, D_, REP_, WARPS>(B, hkv, n_slots, nb, scale, softcap, window, splits);
  VX_CASE(64, 1)
  VX_CASE(128, 4)
  VX_CASE(256, 2)
  VX_CASE(80, 1)
  VX_CASE(96, 8)
#undef VX_CASE
  return 3;
}

template <class T>
int dispatch(int warps, int d, int rep, int B, int hkv, int n_slots, int nb, float scale,
             float softcap, int window, int splits) {
  switch (warps) {
    case 4: return dispatch<T, 4>(d, rep, B, hkv, n_slots, nb, scale, softcap, window, splits);
    case 8: return dispatch<T, 8>(d, rep, B, hkv, n_slots, nb, scale, softcap, window, splits);
    case 16: return dispatch<T, 16>(d, rep, B, hkv, n_slots, nb, scale, softcap, window, splits);
  }
  return 3;
}

int main(int argc, char** argv) {
  if (argc != 14) return 2;  // see the usage above
  const int B = atoi(argv[1]), hq = atoi(argv[2]), hkv = atoi(argv[3]), d = atoi(argv[4]);
  const int n_blocks = atoi(argv[5]), bs = atoi(argv[6]), nb = atoi(argv[7]);
  const int bf16 = atoi(argv[8]);
  const float scale = atof(argv[9]), softcap = atof(argv[10]);
  const int window = atoi(argv[11]), splits = atoi(argv[12]), warps = atoi(argv[13]);
  if (bs != 16) return 3;
  const int n_slots = n_blocks * bs;
  return bf16 ? dispatch<__nv_bfloat16>(warps, d, hq / hkv, B, hkv, n_slots, nb, scale, softcap, window, splits)
              : dispatch<float>(warps, d, hq / hkv, B, hkv, n_slots, nb, scale, softcap, window, splits);
}
