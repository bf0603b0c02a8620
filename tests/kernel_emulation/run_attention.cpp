// Runs the CUDA paged decode attention (vexel_core/attention/kernels/cuda/paged_decode.cu, the
// call, and paged_decode_kernel.cuh, the algorithm) on the CPU; built and driven by
// tests/test_attention_kernels.py. Usage:
//   run_attention B HQ HKV D N_BLOCKS BS NB BF16 SCALE SOFTCAP WINDOW SPLITS WARPS WRITE DS
//     ROPE_DIMS ROPE_INTERLEAVED ROPE_SCALE ROPE_ATTN NEW_HEADS K0 V0 < in > out
// Inputs on stdin: q [B, HQ, D], k_pool and v_pool [N_BLOCKS * BS, HKV, D] (float32, or
// bfloat16 with BF16=1), tables [B, NB] and context lengths [B] (int32); with WRITE=1 also the
// new rows k_new and v_new [B, NEW_HEADS, DS] (element d of a row at d, DS >= D: rows with a
// gap, read through strides as views are on the GPU; KV head h's rows at heads K0 + h and
// V0 + h, as in a packed launch) and new_slots [B] (int32); with ROPE_DIMS > 0
// last the rotation's inverse frequencies [ROPE_DIMS / 2] (float32). Writes out
// [B, HQ, D], then with WRITE=1 the pools as the kernel left them; with SPLITS > 1 the last
// span of each (sequence, KV head) merges them (merge.cuh), as on the GPU, and the counts must
// be back at zero (exit 6 if not).
#include "attention_on_cpu.h"
#include "launch_on_cpu.h"
#include "rope.cuh"
#include "merge.cuh"
#include "paged_decode_kernel.cuh"

#include <cstdio>
#include <cstdlib>
#include <vector>

constexpr bool PREFETCH = true;  // a hint, nothing to do on the CPU

template <class T, int D, int REP, int BS, int WARPS, bool WRITE>
void body(const T* q, const int* q_shape, const int64_t* q_strides, const T* k_pool,
          const int* k_pool_shape, const T* v_pool, const int* tables, const int* tables_shape,
          const int64_t* tables_strides, const int* ctx_lens, const int64_t* ctx_lens_strides,
          const float* fparams, const int* iparams, const float* rope_freqs,
          const int* rope_freqs_shape, const unsigned* counters, const int* after, const T* k_new,
          const int64_t* k_new_strides, const T* v_new, const int64_t* v_new_strides,
          const int* new_slots, const int64_t* new_slots_strides, T* out, float* part,
          int* done) {
#include "paged_decode.cu"
}

// The command line past the shapes.
struct Args {
  int B, hkv, n_slots, nb;
  float scale, softcap;
  int window, splits, ds;
  int rope_dims, rope_interleaved;
  float rope_scale, rope_attn_factor;
  int new_heads, k0, v0;
};

template <class T, int D, int REP, int WARPS, bool WRITE>
int run(const Args& a) {
  const int B = a.B, hkv = a.hkv, n_slots = a.n_slots, nb = a.nb, splits = a.splits, ds = a.ds;
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
  std::vector<T> k_new(WRITE ? size_t(B) * a.new_heads * ds : 1), v_new(k_new.size());
  std::vector<int> new_slots(WRITE ? B : 1);
  if (WRITE) {
    for (auto* part : {&k_new, &v_new}) {
      if (fread(part->data(), sizeof(T), part->size(), stdin) != part->size()) return 4;
    }
    if (fread(new_slots.data(), 4, new_slots.size(), stdin) != new_slots.size()) return 4;
  }
  std::vector<float> inv_freq(std::max(1, a.rope_dims / 2));
  if (a.rope_dims > 0 && fread(inv_freq.data(), 4, inv_freq.size(), stdin) != inv_freq.size()) {
    return 4;
  }
  const int after = 0;
  int done = -1;
  std::vector<unsigned> counters(size_t(B) * hkv, 0u);  // the split merge's counts
  const float fparams[4] = {a.scale, a.softcap, a.rope_scale, a.rope_attn_factor};
  const int iparams[7] = {a.window, splits, a.rope_dims, a.rope_interleaved, a.k0, a.v0, WRITE};
  const int k_shape[3] = {n_slots, hkv, D}, q_shape[3] = {B, hq, D}, t_shape[2] = {B, nb};
  const int freqs_shape[1] = {int(inv_freq.size())};
  const int64_t q_strides[3] = {int64_t(hq) * D, D, 1}, t_strides[2] = {nb, 1}, one[1] = {1};
  const int64_t new_strides[3] = {int64_t(a.new_heads) * ds, ds, 1};
  launch(B * hkv * splits, WARPS * 32, [&] {
    body<T, D, REP, 16, WARPS, WRITE>(q.data(), q_shape, q_strides, k.data(), k_shape,
                                      v.data(), tables.data(), t_shape, t_strides, ctx.data(), one,
                                      fparams, iparams, inv_freq.data(), freqs_shape,
                                      counters.data(), &after, k_new.data(), new_strides,
                                      v_new.data(), new_strides, new_slots.data(), one,
                                      out.data(), part.data(), &done);
  });
  if (WRITE && done != after) return 5;  // the write's token was not passed on
  for (unsigned c : counters) {
    if (c != 0u) return 6;  // a split merge's count not left at zero for the next launch
  }
  fwrite(out.data(), sizeof(T), out.size(), stdout);
  if (WRITE) {
    fwrite(k.data(), sizeof(T), k.size(), stdout);
    fwrite(v.data(), sizeof(T), v.size(), stdout);
  }
  return 0;
}

// The (D, REP) combinations the tests use, at each warp count the launcher chooses among.
template <class T, int WARPS, bool WRITE>
int dispatch(int d, int rep, const Args& a) {
#define VX_CASE(D_, REP_) \
  if (d == D_ && rep == REP_) return run<T, D_, REP_, WARPS, WRITE>(a);
  VX_CASE(64, 1)
  VX_CASE(128, 4)
  VX_CASE(256, 2)
  VX_CASE(80, 1)
  VX_CASE(96, 8)
#undef VX_CASE
  return 3;
}

template <class T, bool WRITE>
int dispatch(int warps, int d, int rep, const Args& a) {
  switch (warps) {
    case 4: return dispatch<T, 4, WRITE>(d, rep, a);
    case 8: return dispatch<T, 8, WRITE>(d, rep, a);
    case 16: return dispatch<T, 16, WRITE>(d, rep, a);
  }
  return 3;
}

template <class T>
int dispatch(int write, int warps, int d, int rep, const Args& a) {
  return write ? dispatch<T, true>(warps, d, rep, a) : dispatch<T, false>(warps, d, rep, a);
}

int main(int argc, char** argv) {
  if (argc != 23) return 2;  // see the usage above
  const int B = atoi(argv[1]), hq = atoi(argv[2]), hkv = atoi(argv[3]), d = atoi(argv[4]);
  const int n_blocks = atoi(argv[5]), bs = atoi(argv[6]), nb = atoi(argv[7]);
  const int bf16 = atoi(argv[8]), warps = atoi(argv[13]), write = atoi(argv[14]);
  const Args a{B, hkv, n_blocks * bs, nb, float(atof(argv[9])), float(atof(argv[10])),
               atoi(argv[11]), atoi(argv[12]), atoi(argv[15]), atoi(argv[16]), atoi(argv[17]),
               float(atof(argv[18])), float(atof(argv[19])), atoi(argv[20]), atoi(argv[21]),
               atoi(argv[22])};
  if (bs != 16 || a.ds < d || (write && a.new_heads < std::max(a.k0, a.v0) + hkv)) return 3;
  return bf16 ? dispatch<__nv_bfloat16>(write, warps, d, hq / hkv, a)
              : dispatch<float>(write, warps, d, hq / hkv, a);
}
