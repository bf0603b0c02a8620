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
//            and value rows requested into L2, a chunk ahead (the next chunk's table entries
//            are read as this chunk starts, its rows requested after this chunk's scores);
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
// written in batches, but ptxas (CUDA 13, sm_90, no launch bounds: mx.fast.cuda_kernel takes
// none, though a header may add them to the kernel it generates, benchmarks/kernel_attributes.py)
// interleaves them with their uses to save registers: ~2 key words and ~4 value rows in flight. Hence the prefetch: the rows' later loads wait for L2, not for DRAM.
// Hence too the fence (FENCED): a __syncwarp after a batch of key loads keeps ptxas from
// moving them below their uses (nvdisasm, D = 128 bf16: without it each of a lane's 16 key
// words is loaded after the products of the one before, one L2 round trip each; with it a
// batch's loads go out together), at the cost of registers: key batches of 8 words. On the
// H200 it took 4-13% off a layer's attention at every launcher shape of 1 and 16 sequences
// (session 13, benchmarks/decode_attention.py, notes/gpu-kernels.md).
//
// The prologue is two round trips: first every load that needs no loaded value (parameters,
// the context length, q's heads, the rotation's frequencies, and with one span and no window
// the first chunk's table entries, whose rows are then requested), then those that need the
// context length (the new rows; the table entries where the span starts elsewhere). At one
// request (8 CTAs) a CTA's chain of round trips is the kernel's time; written load, use,
// load, ..., the prologue alone was ~12 of them, half the kernel (session 28, Nsight
// Compute's stall samples). Written so; the H200's SASS still issues the guessed table
// entries after the context length's first use, q's loads (in branches) before them
// (session 38's profile, notes/gpu-kernels.md).
//
// Rotation (iparams[2] > 0; `Rope` in rope.cuh): q and the new keys arrive unrotated and are
// rotated at the query's position (ctx - 1) as they are read, each element rounded to T as
// MLX's rope would leave it; one launch a layer fewer than that rope kernel. q's heads are
// rotated in shared memory (an element's partner read there, not loaded again).
//
// Split context (S > 1 spans, for long contexts of batches too small to fill the GPU; on CUDA
// S comes from the grid, B x Hkv x S CTAs, and iparams[1] serves the Metal kernel):
// CTA (sequence, KV head, split) takes one span of the context and writes its (max, sum,
// accumulator) per query head to `part` [B, Hq, S, 2 + D] float32; the last of the S CTAs of
// a (sequence, KV head) to finish, counted in `counters` [B * Hkv] (zero before the launch,
// and left so), merges the spans into `out` (`merge_last`): no merge launch, whose host cost
// (~10 us a layer on the H200) a long context's decode step paid in every layer. S is a
// runtime value: every template value costs a compile.

namespace vxa {

// The CTA's index and the count of CTAs that attend: the grid's, unless a kernel that hosts
// this one among CTAs of its own defines them first (benchmarks/staged_attention.cu). Macros,
// not parameters: passed as values, they changed ptxas's schedule (133 -> 117 registers, nvcc
// 13, 8 warps), and the schedule of this kernel's loads is what its time is (session 51).
#ifndef VXA_CTA
#define VXA_CTA blockIdx.x
#define VXA_CTAS gridDim.x
#endif

template <class T, int D, int REP, int BS, int WARPS, bool PREFETCH, class Strides, class Shape>
__device__ __forceinline__ void paged_decode(
    const T* q, const Shape& q_shape, const Strides& q_strides, const T* k_pool,
    const Shape& k_pool_shape, const T* v_pool, const int* tables, const Shape& tables_shape,
    const Strides& tables_strides, const int* ctx_lens, const Strides& ctx_lens_strides,
    const float* fparams, const int* iparams, const float* rope_freqs,
    const Shape& rope_freqs_shape, const unsigned* counters, const int* after, const T* k_new,
    const Strides& k_new_strides, const T* v_new, const Strides& v_new_strides,
    const int* new_slots, const Strides& new_slots_strides, T* out, float* part, int* done) {
  constexpr int THREADS = WARPS * 32;
  constexpr int EV = (D + 31) / 32;        // output elements per lane
  constexpr int PER = 16 / sizeof(T);      // elements per 16-byte word
  constexpr int KW = D / PER;              // words per key row
  constexpr int QN = (REP * D + THREADS - 1) / THREADS;  // query elements per thread
  constexpr int NN = (D + THREADS - 1) / THREADS;        // new-row elements per thread
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
  static_assert(D / 2 <= THREADS, "a thread per rotation frequency");
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  const int n_kv = k_pool_shape[1];
  // The CTA's place from the grid's shape (B x n_kv x S CTAs, B = q_shape[0]), not from
  // iparams[1]: a loaded span count held back every other load by a round trip
  const int splits = VXA_CTAS / (q_shape[0] * n_kv);
  const int split = VXA_CTA % splits;
  const int seq = VXA_CTA / splits / n_kv;
  const int kvh = VXA_CTA / splits % n_kv;

  // Round trip 1: every load that needs no loaded value, all issued before any is used. Written
  // as a chain (each load's use before the next load), the prologue was half of the kernel's
  // time at one request (session 28, Nsight Compute: ~12 dependent round trips).
  const int ctx = ctx_lens[seq * ctx_lens_strides[0]];
  const int window = iparams[0];     // 0: none
  const int dims = iparams[2];       // rotated features; 0: no rotation
  const bool interleaved = iparams[3] != 0;
  const int k_head = iparams[4] + kvh, v_head = iparams[5] + kvh;
  const bool writing = iparams[6] != 0;
  const float scale = fparams[0];
  const float softcap = fparams[1];  // 0: none
  const float rope_scale = fparams[2], attn_factor = fparams[3];
  const int token = VXA_CTA == 0 && threadIdx.x == 0 ? after[0] : 0;
  T q_raw[QN];  // converted after the fence: a conversion is a use
  #pragma unroll
  for (int j = 0; j < QN; ++j) {
    const int i = threadIdx.x + j * THREADS;
    if (i < REP * D) {
      q_raw[j] = q[seq * q_strides[0] + (kvh * REP + i / D) * q_strides[1] + i % D * q_strides[2]];
    }
  }
  const float freq =
      threadIdx.x < D / 2 && threadIdx.x < rope_freqs_shape[0] ? rope_freqs[threadIdx.x] : 0.f;
  // The first chunk's table entries, guessed: with one span and no window the warp's first
  // chunk starts at token warp * 32 whatever the context's length, so they need no loaded
  // value (clamped to the table's width; entries past the context are not used). Loaded after
  // the context length, they held back the first chunk's key rows by a round trip.
  const int guess = min(warp * 32 + lane, int(tables_shape[1]) * BS - 1);
  const int guessed_block = tables[seq * tables_strides[0] + guess / BS * tables_strides[1]];
  // A fence for ptxas, as for the key batches (FENCED below): loads above, uses below. Not
  // tight: ptxas still computes ctx - window (for lo, hi) before the last parameters' loads
  // (its model of a load's latency is far below DRAM's), so round trip 1 is two (local nvcc
  // 13 for sm_90 and nvdisasm; session 28). q stays raw until after the fence: its
  // conversion, written into the load, waited for each element in turn (0.15-0.35 us a layer
  // at 128-256 tokens on the H200, session 29).
  __syncwarp();
  __shared__ float s_q[REP][D];
  __shared__ float s_freq[D / 2];
  __shared__ float s_p[WARPS][REP][32];
  __shared__ int s_row[WARPS][32];
  if (threadIdx.x < D / 2) s_freq[threadIdx.x] = freq;
  float qv[QN];
  #pragma unroll
  for (int j = 0; j < QN; ++j) {
    const int i = threadIdx.x + j * THREADS;
    if (i < REP * D) s_q[i / D][i % D] = qv[j] = to_float(q_raw[j]);
  }

  const int first = window > 0 ? max(0, ctx - window) : 0;
  const int span = ((ctx - first + splits - 1) / splits + 31) / 32 * 32;  // whole chunks
  const int lo = first + split * span;   // this CTA's tokens: [lo, hi)
  const int hi = min(ctx, lo + span);
  // the query is its sequence's newest token: position ctx - 1
  const Rope rope{dims, interleaved, (ctx - 1) * rope_scale, attn_factor, s_freq};
  const bool guessed = splits == 1 && first == 0;  // the guess above holds
  // Context token t: its block's entry of the table (a load), then its pool row, slot * n_kv +
  // kvh (arithmetic): apart, so that the arithmetic can wait a round trip after the load.
  const auto block_of = [&](int t) {
    return tables[seq * tables_strides[0] + t / BS * tables_strides[1]];
  };
  const auto row_in = [&](int block, int t) { return (block * BS + t % BS) * n_kv + kvh; };
  // (PREFETCH) a token's key and value rows requested into L2, a round trip ahead of their use
  const auto request_rows = [&](int row) {
    if (PREFETCH) {
      prefetch_l2(k_pool + (size_t)row * D, D * sizeof(T));
      prefetch_l2(v_pool + (size_t)row * D, D * sizeof(T));
    }
  };

  // The first chunk's rows requested now where the guess holds, a round trip before the new
  // rows below are in.
  int c0 = lo + warp * 32;
  if (guessed && c0 + lane < hi) request_rows(row_in(guessed_block, c0 + lane));

  // Round trip 2: the step's new rows where this span holds the new token (the CTA of
  // (sequence, KV head) that alone reads them), and where the guess does not hold (a window,
  // or spans) this warp's first chunk's table entries. Before the stores below (which the
  // compiler must otherwise keep them after), and unconditional, their indices clamped:
  // ptxas schedules within a branch's block, and a branch around a load let it put the load's
  // first use right after it (session 28, SASS).
  const int block =  // used where c0 + lane < hi
      guessed ? guessed_block : block_of(max(0, min(c0 + lane, ctx - 1)));
  const bool writes = writing && lo <= ctx - 1 && ctx - 1 < hi;
  // a CTA that does not write reads its own q head instead: placeholders are shorter than a row
  const T* kh = writes ? k_new + seq * k_new_strides[0] + k_head * k_new_strides[1]
                       : q + seq * q_strides[0] + kvh * REP * q_strides[1];
  const T* vh = writes ? v_new + seq * v_new_strides[0] + v_head * v_new_strides[1] : kh;
  const size_t k_step = writes ? k_new_strides[2] : q_strides[2];
  const size_t v_step = writes ? v_new_strides[2] : q_strides[2];
  const int slot = new_slots[writes ? seq * new_slots_strides[0] : 0];
  int partner[NN];  // indices first: rope_partner branches, and a branch splits the batch
  #pragma unroll
  for (int j = 0; j < NN; ++j) {
    partner[j] = rope_partner(rope, min(int(threadIdx.x) + j * THREADS, D - 1));
  }
  T kv[NN], kp[NN], vv[NN];  // converted after the batch: a conversion is a use
  #pragma unroll
  for (int j = 0; j < NN; ++j) {
    const int i = min(int(threadIdx.x) + j * THREADS, D - 1);  // stored where < D
    kv[j] = kh[i * k_step];
    kp[j] = kh[partner[j] * k_step];
    vv[j] = vh[i * v_step];
  }
  __syncwarp();  // the loads above issued before the uses below (see round trip 1)
  __syncthreads();  // s_q and s_freq written
  int row = c0 + lane < hi ? row_in(block, c0 + lane) : 0;
  const size_t new_row = ((size_t)slot * n_kv + kvh) * D;

  // Meanwhile: q rotated (partners read from s_q, so every element is read before any is
  // rewritten), each element rounded to T as a rotation before the kernel would leave it.
  #pragma unroll
  for (int j = 0; j < QN; ++j) {
    const int i = threadIdx.x + j * THREADS;
    if (i < REP * D && rope.dims > 0) {
      const int r = i / D, d = i % D;
      const float rotated = rope_rotate(rope, d, s_q[r][d], s_q[r][rope_partner(rope, d)]);
      qv[j] = to_float(from_float<T>(rotated));
    }
  }
  if (!guessed && c0 + lane < hi) request_rows(row);
  __syncthreads();  // every partner read
  #pragma unroll
  for (int j = 0; j < QN; ++j) {
    const int i = threadIdx.x + j * THREADS;
    if (i < REP * D) s_q[i / D][i % D] = qv[j] * scale;
  }
  if (writes) {  // stored in place; the barrier below makes them visible to the CTA's warps
  #pragma unroll
    for (int j = 0; j < NN; ++j) {
      const int i = threadIdx.x + j * THREADS;
      if (i < D) {
        writable(k_pool)[new_row + i] =
            rope.dims > 0 ? from_float<T>(rope_rotate(rope, i, to_float(kv[j]), to_float(kp[j])))
                          : kv[j];
        writable(v_pool)[new_row + i] = vv[j];
      }
    }
  }
  if (writing && VXA_CTA == 0 && threadIdx.x == 0) done[0] = token;
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

  for (; c0 < hi; c0 += THREADS) {
    const int n = min(32, hi - c0);  // tokens in this chunk (warp-uniform)
    s_row[warp][lane] = row;
    // The warp's next chunk: its table entries requested now, its rows after the scores, so
    // that both are a round trip ahead of their use.
    const int t_next = c0 + THREADS + lane;
    const int next_block = t_next < hi ? block_of(t_next) : 0;

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
    const int next = t_next < hi ? row_in(next_block, t_next) : 0;
    if (t_next < hi) request_rows(next);

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
    row = next;
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
