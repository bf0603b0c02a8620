// Paged decode attention for Apple GPUs: the same algorithm, names and tiling as
// ../cuda/paged_decode.cu. One threadgroup per (sequence, KV head), the REP query heads in
// threadgroup memory; a simdgroup takes 32 tokens at a time: a lane per token for the scores,
// simdgroup reductions for the softmax, ROWS value rows at a time into each lane's EV output
// elements; the simdgroups' partial results merged in threadgroup memory. WARPS (simdgroups
// per threadgroup: 4, 8 or 16) is chosen by the launcher as for CUDA, within Apple GPUs' 32 KiB
// of threadgroup memory. PREFETCH is accepted and ignored: Metal has no L2 prefetch
// instruction. With iparams[1] = S > 1 each threadgroup takes one span of the context and
// writes `part` (see the CUDA file). iparams[6] != 0: this step's rows written into the pools
// first, and q, tables, ctx_lens and the new rows read through their strides, as there. ROPE
// (iparams[2] > 0): q and the new keys rotated at the query's position as they are read, as
// ../cuda/rope.cuh does (here a macro: a body defines no functions).
// NEVER COMPILED OR RUN by Apple's Metal compiler or on a GPU: no Apple machine exists where
// this project is developed. Emulated on the CPU as C++, wrapped and launched as
// ../__init__.py hands it to mx.fast.metal_kernel (tests/emulation.py, MetalRecorder;
// tests/test_attention_kernels.py, against float64 attention).
constexpr int EV = (D + 31) / 32;
constexpr int ROWS = EV <= 4 ? 16 : 8;
const int lane = int(thread_position_in_threadgroup.x & 31);
const int warp = int(thread_position_in_threadgroup.x >> 5);
const int n_kv = k_pool_shape[1];
const int splits = iparams[1];
const int split = int(threadgroup_position_in_grid.x) % splits;
const int seq = int(threadgroup_position_in_grid.x) / splits / n_kv;
const int kvh = int(threadgroup_position_in_grid.x) / splits % n_kv;
const float scale = fparams[0];
const float softcap = fparams[1];
const int window = iparams[0];
const int ctx = ctx_lens[seq * ctx_lens_strides[0]];
const int first = window > 0 ? max(0, ctx - window) : 0;
const int span = ((ctx - first + splits - 1) / splits + 31) / 32 * 32;
const int lo = first + split * span;
const int hi = min(ctx, lo + span);

const int rope_dims = iparams[2];
const bool rope_pairs = iparams[3] != 0;  // adjacent pairs, else the two halves
const float rope_position = float(ctx - 1) * fparams[2];  // the query is the newest token
// Element d of a row turns with its partner; ROTATED is element d (value x) rotated, given its
// partner's value y, rounded to T as a rotation before the kernel would leave it.
#define VX_HALF (rope_dims / 2)
#define VX_SECOND(d) (rope_pairs ? ((d) & 1) != 0 : (d) >= VX_HALF)
#define VX_PARTNER(d) (rope_pairs ? (d) ^ 1 : VX_SECOND(d) ? (d) - VX_HALF : (d) + VX_HALF)
#define VX_ANGLE(d) (rope_position * rope_freqs[rope_pairs ? (d) / 2 : (d) % VX_HALF])
#define VX_ROTATED(d, x, y)                                                                  \
  T((VX_SECOND(d) ? (y) * precise::sin(VX_ANGLE(d)) + (x) * precise::cos(VX_ANGLE(d))       \
                  : (x) * precise::cos(VX_ANGLE(d)) - (y) * precise::sin(VX_ANGLE(d))) *    \
    fparams[3])

threadgroup float s_q[REP][D];
threadgroup float s_p[WARPS][REP][32];
threadgroup int s_row[WARPS][32];
for (uint i = thread_position_in_threadgroup.x; i < REP * D; i += WARPS * 32) {
  const int d = int(i % D);
  const size_t head = seq * q_strides[0] + (kvh * REP + i / D) * q_strides[1];
  float qi = float(q[head + d * q_strides[2]]);
  if (d < rope_dims) {
    qi = float(VX_ROTATED(d, qi, float(q[head + VX_PARTNER(d) * q_strides[2]])));
  }
  s_q[i / D][d] = qi * scale;
}
if (iparams[6] != 0) {  // writing (a runtime value, as for CUDA: one kernel fewer to compile)
  if (lo <= ctx - 1 && ctx - 1 < hi) {
    const size_t row = (size_t(new_slots[seq * new_slots_strides[0]]) * n_kv + kvh) * D;
    // the new rows' first heads: iparams[4] and [5] (nonzero when q, k_new, v_new are packed)
    const size_t head = seq * k_new_strides[0] + (iparams[4] + kvh) * k_new_strides[1];
    for (uint i = thread_position_in_threadgroup.x; i < D; i += WARPS * 32) {
      const int d = int(i);
      T ki = k_new[head + d * k_new_strides[2]];
      if (d < rope_dims) {
        ki = VX_ROTATED(d, float(ki), float(k_new[head + VX_PARTNER(d) * k_new_strides[2]]));
      }
      ((device T*)k_pool)[row + i] = ki;
      ((device T*)v_pool)[row + i] =
          v_new[seq * v_new_strides[0] + (iparams[5] + kvh) * v_new_strides[1] +
                i * v_new_strides[2]];
    }
  }
  if (threadgroup_position_in_grid.x == 0 && thread_position_in_threadgroup.x == 0) {
    done[0] = after[0];
  }
}
threadgroup_barrier(mem_flags::mem_threadgroup | mem_flags::mem_device);

float m[REP], l[REP], acc[REP][EV];
for (int r = 0; r < REP; ++r) {
  m[r] = -INFINITY;
  l[r] = 0.f;
  for (int e = 0; e < EV; ++e) acc[r][e] = 0.f;
}
const int d0 = lane * EV;

for (int c0 = lo + warp * 32; c0 < hi; c0 += WARPS * 32) {
  const int n = min(32, hi - c0);
  const int t = c0 + lane;
  int row = 0;
  if (lane < n) {
    row = (tables[seq * tables_strides[0] + t / BS * tables_strides[1]] * BS + t % BS) * n_kv + kvh;
  }
  s_row[warp][lane] = row;

  float s[REP];
  for (int r = 0; r < REP; ++r) s[r] = 0.f;
  if (lane < n) {
    const size_t base = size_t(row) * D;
    for (int d = 0; d < D; ++d) {
      const float k = float(k_pool[base + d]);
      for (int r = 0; r < REP; ++r) s[r] += s_q[r][d] * k;
    }
  }

  for (int r = 0; r < REP; ++r) {
    float x = s[r];
    if (softcap > 0.f) x = softcap * precise::tanh(x / softcap);
    if (lane >= n) x = -INFINITY;
    const float m_new = max(m[r], simd_max(x));
    const float corr = exp(m[r] - m_new);
    const float p = exp(x - m_new);
    l[r] = l[r] * corr + simd_sum(p);
    m[r] = m_new;
    for (int e = 0; e < EV; ++e) acc[r][e] *= corr;
    s_p[warp][r][lane] = p;
  }
  simdgroup_barrier(mem_flags::mem_threadgroup);

  for (int j0 = 0; j0 < n; j0 += ROWS) {
    float vf[ROWS][EV];
    for (int j = 0; j < ROWS; ++j) {
      const size_t base = size_t(s_row[warp][min(j0 + j, n - 1)]) * D + d0;
      for (int e = 0; e < EV; ++e) vf[j][e] = d0 + e < D ? float(v_pool[base + e]) : 0.f;
    }
    for (int j = 0; j < ROWS; ++j) {
      for (int r = 0; r < REP; ++r) {
        const float p = j0 + j < n ? s_p[warp][r][j0 + j] : 0.f;
        for (int e = 0; e < EV; ++e) acc[r][e] += p * vf[j][e];
      }
    }
  }
  simdgroup_barrier(mem_flags::mem_threadgroup);
}

threadgroup float s_m[WARPS][REP];
threadgroup float s_l[WARPS][REP];
threadgroup float s_acc[WARPS][REP][D];
for (int r = 0; r < REP; ++r) {
  if (lane == 0) {
    s_m[warp][r] = m[r];
    s_l[warp][r] = l[r];
  }
  for (int e = 0; e < EV; ++e) {
    if (d0 + e < D) s_acc[warp][r][d0 + e] = acc[r][e];
  }
}
threadgroup_barrier(mem_flags::mem_threadgroup);
for (uint i = thread_position_in_threadgroup.x; i < REP * D; i += WARPS * 32) {
  const int r = i / D;
  const int d = i % D;
  float big = -INFINITY;
  for (int w = 0; w < WARPS; ++w) big = max(big, s_m[w][r]);
  float num = 0.f, den = 0.f;
  for (int w = 0; w < WARPS; ++w) {
    const float f = s_m[w][r] == -INFINITY ? 0.f : exp(s_m[w][r] - big);
    num += s_acc[w][r][d] * f;
    den += s_l[w][r] * f;
  }
  const size_t head = size_t(seq) * n_kv * REP + kvh * REP + r;
  if (splits == 1) {
    out[head * D + d] = T(den > 0.f ? num / den : 0.f);
  } else {
    const size_t p = (head * splits + split) * (2 + D);
    if (d == 0) {
      part[p] = big;
      part[p + 1] = den;
    }
    part[p + 2 + d] = num;
  }
}
