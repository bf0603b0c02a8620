// The paged decode attention kernel's algorithm, a device function that cuda/paged_decode.cu
// calls with the kernel's parameters (MLX copies a custom kernel's body text on every launch,
// so the body stays one call; this file is included by path, `vexel_core.gpu.cuda_header`).
// tests/kernel_emulation/run_attention.cpp compiles the same file for the CPU, with
// attention_on_cpu.h in place of paged_decode.cuh's helpers.
//
// Paged decode attention: one query token per sequence, keys and values read through the
// block table, never gathered. Template arguments: T (element type), D (head size, with
// D * sizeof(T) a multiple of 16, so every row of the pools is 16-byte aligned), REP (query
// heads per KV head), BS (tokens per KV block), WARPS (warps per CTA: 4, 8 or 16, chosen by
// the launcher, `warp_count`), PREFETCH (prefetch each token's rows; always on, except where
// benchmarks/decode_attention.py measures without). Whether the step's rows are written
// first is a runtime value (iparams[6], below): as a template value it doubled the kernels
// NVRTC compiles at start-up (1.2-3 s each on the H200) for a branch taken once per CTA, at
// the same GPU time (notes/engine-gpu.md, session 26).
//
// Inputs are read through their strides (MLX passes them as they are, no copies): q, tables,
// ctx_lens and the new rows may be views; the pools are whole allocations (KVPool's), rows
// contiguous.
//
// Writing (iparams[6] != 0): this step's key and value rows k_new/v_new [B, Hkv, D] (heads
// iparams[4] and iparams[5] on: q, k_new and v_new may be one packed array, the fused
// projection's heads, whose slices would each be an array more for MLX in every step) go
// into the pools at new_slots[B] first, in place (as cache_write.cu does: the pools are
// inputs written through their pointers, and `done`, a copy of `after`, is the write's token
// for the pools' next readers). Each sequence's new token is the last of its context, so the
// CTA of (sequence, KV head) whose span holds it is the only one that reads its rows: it writes
// them, and its barrier before the chunks makes them visible to its warps. One launch a
// layer instead of two in a decode step (kvcache/kernels/cuda/cache_write.cu otherwise).
//
// One CTA per (sequence, KV head); the REP query heads that share the KV head sit in shared
// memory. A warp takes 32 tokens at a time (chunks round-robin over the warps):
//   rows:    each lane one token: its pool row from the block table, and (PREFETCH) its key
//            and value rows requested into L2 at once;
//   scores:  the lane's key row read in 16-byte words, dotted with the REP query heads (no
//            shuffles);
//   softmax: the chunk's maximum and sum by warp reductions, folded into the warp's running
//            (max, sum, accumulator) per query head;
//   values:  each lane EV consecutive elements of the output; the chunk's value rows are read
//            ROWS tokens at a time (coalesced across the warp) and weighted by the
//            probabilities the score step left in shared memory.
// The warps' partial results are merged in shared memory at the end.
//
// Latency: a small batch has few CTAs, and each warp's chunks are a chain of memory round
// trips (table, then key, then values), so the launcher gives such grids more warps, which
// walk the context in fewer rounds (16 warps take 512 tokens at once). The loads below are
// written in batches, but ptxas (CUDA 13, sm_90, no launch bounds, which mx.fast.cuda_kernel
// cannot give) interleaves them with their uses to save registers: ~2 key words and ~4 value
// rows in flight. Hence the prefetch: the rows' later loads wait for L2, not for DRAM.
// Hence too the fence (FENCED): a __syncwarp after a batch of key loads keeps ptxas from
// moving them below their uses (nvdisasm, D = 128 bf16: without it each of a lane's 16 key
// words is loaded after the products of the one before, one L2 round trip each; with it a
// batch's loads go out together), at the cost of registers: key batches of 8 words. On the
// H200 it took 4-13% off a layer's attention at every launcher shape of 1 and 16 sequences
// (session 13, benchmarks/decode_attention.py, notes/gpu-kernels.md).
//
// Rotation (iparams[2] > 0; `Rope` in rope.cuh): q and the new keys arrive unrotated and are
// rotated at the query's position (ctx - 1) as they are read, each element rounded to T as
// MLX's rope would leave it; one launch a layer fewer than that rope kernel.
//
// Split context (iparams[1] = S > 1, for long contexts of batches too small to fill the GPU):
// CTA (sequence, KV head, split) takes one span of the context and writes its (max, sum,
// accumulator) per query head to `part` [B, Hq, S, 2 + D] float32; the last of the S CTAs of
// a (sequence, KV head) to finish, counted in `counters` [B * Hkv] (zero before the launch,
// and left so), merges the spans into `out` (`merge_last`): no merge launch, whose host cost
// (~10 us a layer on the H200) a long context's decode step paid in every layer. S is a
// runtime value: every template value costs a compile.

namespace vxa {

template <class T, int D, int REP, int BS, int WARPS, bool PREFETCH, class Strides, class Shape>
__device__ __forceinline__ void paged_decode(
    const T* q, const Strides& q_strides, const T* k_pool, const Shape& k_pool_shape,
    const T* v_pool, const int* tables, const Strides& tables_strides, const int* ctx_lens,
    const Strides& ctx_lens_strides, const float* fparams, const int* iparams,
    const float* rope_freqs, const unsigned* counters, const int* after,
    const T* k_new, const Strides& k_new_strides, const T* v_new, const Strides& v_new_strides,
    const int* new_slots, const Strides& new_slots_strides, T* out, float* part, int* done) {
  constexpr int EV = (D + 31) / 32;        // output elements per lane
  constexpr int PER = 16 / sizeof(T);      // elements per 16-byte word
  constexpr int KW = D / PER;              // words per key row
  // Fenced where registers allow: fenced loads are all in flight at once, which with eight
  // query heads a KV head (REP 8: accumulators of 8 heads) takes a 16-warp CTA over the 128
  // registers a thread it may have (nvcc 13, sm_90: 140-150), so REP 8 runs unfenced
  constexpr bool FENCED = REP < 8;
  // words loaded before use (registers); fenced batches of 16 words would cost 134 registers
  // for D = 128 in bfloat16, batches of 8 at most 116 (float32, REP 4)
  constexpr int KB_MAX = FENCED ? 8 : 16;
  constexpr int KB = KW < KB_MAX ? KW : KB_MAX;
  constexpr int ROWS = EV <= 4 ? 16 : 8;   // value rows loaded per round (ROWS x EV floats)
  static_assert(D % PER == 0, "rows must be whole 16-byte words");
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  const int n_kv = k_pool_shape[1];
  const int splits = iparams[1];
  const int split = blockIdx.x % splits;
  const int seq = blockIdx.x / splits / n_kv;
  const int kvh = blockIdx.x / splits % n_kv;
  const float scale = fparams[0];
  const float softcap = fparams[1];  // 0: none
  const int window = iparams[0];     // 0: none
  const int ctx = ctx_lens[seq * ctx_lens_strides[0]];
  const int first = window > 0 ? max(0, ctx - window) : 0;
  const int span = ((ctx - first + splits - 1) / splits + 31) / 32 * 32;  // whole chunks
  const int lo = first + split * span;   // this CTA's tokens: [lo, hi)
  const int hi = min(ctx, lo + span);

  __shared__ float s_q[REP][D];
  __shared__ float s_p[WARPS][REP][32];
  __shared__ int s_row[WARPS][32];
  // the query is its sequence's newest token: position ctx - 1
  const Rope rope{iparams[2], iparams[3] != 0, (ctx - 1) * fparams[2], fparams[3], rope_freqs};
  for (int i = threadIdx.x; i < REP * D; i += WARPS * 32) {
    const T* qh = q + seq * q_strides[0] + (kvh * REP + i / D) * q_strides[1];
    const int d = i % D;
    float qi = to_float(qh[d * q_strides[2]]);
    if (rope.dims > 0) {  // rounded to T, as a rotation before the kernel would leave it
      const float partner = to_float(qh[rope_partner(rope, d) * q_strides[2]]);
      qi = to_float(from_float<T>(rope_rotate(rope, d, qi, partner)));
    }
    s_q[i / D][d] = qi * scale;
  }
  if (iparams[6] != 0) {  // writing: the same for every thread of the grid
    if (lo <= ctx - 1 && ctx - 1 < hi) {  // this span holds the new token
      const size_t row = ((size_t)new_slots[seq * new_slots_strides[0]] * n_kv + kvh) * D;
      const T* kh = k_new + seq * k_new_strides[0] + (iparams[4] + kvh) * k_new_strides[1];
      for (int i = threadIdx.x; i < D; i += WARPS * 32) {
        T ki = kh[i * k_new_strides[2]];
        if (rope.dims > 0) {
          ki = from_float<T>(rope_rotate(rope, i, to_float(ki),
                                         to_float(kh[rope_partner(rope, i) * k_new_strides[2]])));
        }
        writable(k_pool)[row + i] = ki;
        writable(v_pool)[row + i] =
            v_new[seq * v_new_strides[0] + (iparams[5] + kvh) * v_new_strides[1] +
                  i * v_new_strides[2]];
      }
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) done[0] = after[0];
  }
  __syncthreads();

  float m[REP], l[REP], acc[REP][EV];
  #pragma unroll
  for (int r = 0; r < REP; ++r) {
    m[r] = -INFINITY;
    l[r] = 0.f;
  #pragma unroll
    for (int e = 0; e < EV; ++e) acc[r][e] = 0.f;
  }
  const int d0 = lane * EV;  // this lane's output elements: d0 .. d0 + EV - 1 (those < D)

  for (int c0 = lo + warp * 32; c0 < hi; c0 += WARPS * 32) {
    const int n = min(32, hi - c0);  // tokens in this chunk (warp-uniform)
    const int t = c0 + lane;
    int row = 0;  // the token's row of the pool: slot * n_kv + kvh
    if (lane < n) {
      row = (tables[seq * tables_strides[0] + t / BS * tables_strides[1]] * BS + t % BS) * n_kv + kvh;
    }
    s_row[warp][lane] = row;
    if (PREFETCH && lane < n) {
      prefetch_l2(k_pool + (size_t)row * D, D * sizeof(T));
      prefetch_l2(v_pool + (size_t)row * D, D * sizeof(T));
    }

    // Scores: this lane's token against the REP query heads.
    float s[REP];
  #pragma unroll
    for (int r = 0; r < REP; ++r) s[r] = 0.f;
    const T* krow = k_pool + (size_t)row * D;
  #pragma unroll
    for (int w0 = 0; w0 < KW; w0 += KB) {
      uint4 raw[KB];
  #pragma unroll
      for (int w = 0; w < KB; ++w) {
        if (w0 + w < KW) raw[w] = lane < n ? word(krow, w0 + w) : uint4{0, 0, 0, 0};
      }
      if constexpr (FENCED) __syncwarp();
  #pragma unroll
      for (int w = 0; w < KB; ++w) {
        if (w0 + w >= KW) continue;
        const T* e = reinterpret_cast<const T*>(&raw[w]);
  #pragma unroll
        for (int i = 0; i < PER; ++i) {
          const float k = to_float(e[i]);
  #pragma unroll
          for (int r = 0; r < REP; ++r) s[r] += s_q[r][(w0 + w) * PER + i] * k;
        }
      }
    }

    // Softmax over the chunk, folded into the running state.
  #pragma unroll
    for (int r = 0; r < REP; ++r) {
      float x = s[r];
      if (softcap > 0.f) x = softcap * tanhf(x / softcap);
      if (lane >= n) x = -INFINITY;
      const float m_new = fmaxf(m[r], warp_max(x));
      const float corr = __expf(m[r] - m_new);  // 0 on the first chunk (m = -inf)
      const float p = __expf(x - m_new);
      l[r] = l[r] * corr + warp_sum(p);
      m[r] = m_new;
  #pragma unroll
      for (int e = 0; e < EV; ++e) acc[r][e] *= corr;
      s_p[warp][r][lane] = p;
    }
    __syncwarp();

    // Values: ROWS tokens' rows loaded, then weighted into this lane's output elements.
    for (int j0 = 0; j0 < n; j0 += ROWS) {
      float vf[ROWS][EV];
  #pragma unroll
      for (int j = 0; j < ROWS; ++j) {
        // past the chunk's end, its last row again (weight 0): no branch between the loads
        const T* vrow = v_pool + (size_t)s_row[warp][min(j0 + j, n - 1)] * D + d0;
        load<T, EV>(vrow, D - d0, vf[j]);
      }
  #pragma unroll
      for (int j = 0; j < ROWS; ++j) {
  #pragma unroll
        for (int r = 0; r < REP; ++r) {
          const float p = j0 + j < n ? s_p[warp][r][j0 + j] : 0.f;
  #pragma unroll
          for (int e = 0; e < EV; ++e) acc[r][e] += p * vf[j][e];
        }
      }
    }
    __syncwarp();  // s_p and s_row are rewritten by the next chunk
  }

  // Merge the warps: each publishes (m, l, acc); every thread finishes some outputs.
  __shared__ float s_m[WARPS][REP];
  __shared__ float s_l[WARPS][REP];
  __shared__ float s_acc[WARPS][REP][D];
  #pragma unroll
  for (int r = 0; r < REP; ++r) {
    if (lane == 0) {
      s_m[warp][r] = m[r];
      s_l[warp][r] = l[r];
    }
  #pragma unroll
    for (int e = 0; e < EV; ++e) {
      if (d0 + e < D) s_acc[warp][r][d0 + e] = acc[r][e];
    }
  }
  __syncthreads();
  for (int i = threadIdx.x; i < REP * D; i += WARPS * 32) {
    const int r = i / D;
    const int d = i % D;
    float big = -INFINITY;
  #pragma unroll
    for (int w = 0; w < WARPS; ++w) big = fmaxf(big, s_m[w][r]);
    float num = 0.f, den = 0.f;
  #pragma unroll
    for (int w = 0; w < WARPS; ++w) {
      const float f = s_m[w][r] == -INFINITY ? 0.f : __expf(s_m[w][r] - big);
      num += s_acc[w][r][d] * f;
      den += s_l[w][r] * f;
    }
    const size_t head = (size_t)seq * n_kv * REP + kvh * REP + r;
    if (splits == 1) {
      out[head * D + d] = from_float<T>(den > 0.f ? num / den : 0.f);
    } else {
      float* p = part + (head * splits + split) * (2 + D);
      if (d == 0) {
        p[0] = big;  // -inf for a span with no tokens (a shorter sequence of the batch)
        p[1] = den;
      }
      p[2 + d] = num;
    }
  }
  if (splits > 1) merge_last<T, D, REP, WARPS>(part, counters, seq, kvh, n_kv, splits, out);
}

}  // namespace vxa
