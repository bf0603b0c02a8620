// Paged decode attention: one query token per sequence, keys and values read through the
// block table, never gathered. Template arguments: T (element type), D (head size), REP
// (query heads per KV head), BS (tokens per KV block), WARPS (warps per CTA), EPL (elements
// of a row per lane), U (tokens a lane group loads before it computes), VEC (rows are 16-byte
// aligned: whole-word loads).
//
// One CTA per (sequence, KV head). A row of D elements is spread over LPT lanes (EPL each),
// so a warp holds TPW = 32 / LPT tokens at once and each lane reads 16-byte words; a token's
// score for each of the REP query heads sharing this KV head is summed over its lanes with
// log2(LPT) shuffles. Each lane group walks its own tokens with an online softmax, loading U
// tokens' keys and values before using them (memory-level parallelism); the groups of a warp
// merge by shuffles, the warps through shared memory.
constexpr int LPT = vxa::lanes_per_token(D, EPL);
constexpr int TPW = 32 / LPT;
constexpr int GROUPS = WARPS * TPW;  // lane groups of the CTA, each a stream of tokens
const int lane = threadIdx.x & 31;
const int warp = threadIdx.x >> 5;
const int slot = lane / LPT;  // the warp's token this lane works on
const int d0 = (lane % LPT) * EPL;  // first element of a row this lane holds
const int valid = D - d0;  // elements of its part that exist (<= 0: an idle lane)
const int group = warp * TPW + slot;
const int n_kv = k_pool_shape[1];
const int seq = blockIdx.x / n_kv;
const int kvh = blockIdx.x % n_kv;
const int n_blocks = tables_shape[1];
const float scale = fparams[0];
const float softcap = fparams[1];  // 0: none
const int window = iparams[0];     // 0: none
const int ctx = ctx_lens[seq];
const int first = window > 0 ? max(0, ctx - window) : 0;

float qv[REP][EPL];
#pragma unroll
for (int r = 0; r < REP; ++r) {
  const T* qrow = q + ((size_t)seq * n_kv * REP + kvh * REP + r) * D + d0;
  vxa::load<T, EPL, false>(qrow, valid, qv[r]);  // q may sit at any offset: element loads
#pragma unroll
  for (int e = 0; e < EPL; ++e) qv[r][e] *= scale;
}
float m[REP], l[REP], acc[REP][EPL];
#pragma unroll
for (int r = 0; r < REP; ++r) {
  m[r] = -INFINITY;
  l[r] = 0.f;
#pragma unroll
  for (int e = 0; e < EPL; ++e) acc[r][e] = 0.f;
}

// Token of group g in round k: first + g + k * GROUPS. The loop runs while any group of
// this warp has a token, so that every lane takes part in the shuffles.
for (int k = 0; first + warp * TPW + k * GROUPS < ctx; k += U) {
  float kf[U][EPL], vf[U][EPL];
  bool ok[U];
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const int t = first + group + (k + u) * GROUPS;
    ok[u] = t < ctx;
    if (ok[u]) {
      const int block = tables[(size_t)seq * n_blocks + t / BS];
      const size_t row = ((size_t)block * BS + t % BS) * n_kv + kvh;
      vxa::load<T, EPL, VEC>(k_pool + row * D + d0, valid, kf[u]);
      vxa::load<T, EPL, VEC>(v_pool + row * D + d0, valid, vf[u]);
    } else {
#pragma unroll
      for (int e = 0; e < EPL; ++e) kf[u][e] = vf[u][e] = 0.f;
    }
  }
#pragma unroll
  for (int u = 0; u < U; ++u) {
#pragma unroll
    for (int r = 0; r < REP; ++r) {
      float s = 0.f;
#pragma unroll
      for (int e = 0; e < EPL; ++e) s += qv[r][e] * kf[u][e];
#pragma unroll
      for (int off = LPT / 2; off > 0; off >>= 1) s += __shfl_xor_sync(0xffffffffu, s, off);
      if (!ok[u]) continue;
      if (softcap > 0.f) s = softcap * tanhf(s / softcap);
      const float m_new = fmaxf(m[r], s);
      const float corr = __expf(m[r] - m_new);
      const float p = __expf(s - m_new);
      l[r] = l[r] * corr + p;
#pragma unroll
      for (int e = 0; e < EPL; ++e) acc[r][e] = acc[r][e] * corr + p * vf[u][e];
      m[r] = m_new;
    }
  }
}

// Merge the lane groups of each warp (same elements, different tokens) ...
#pragma unroll
for (int off = LPT; off < 32; off <<= 1) {
#pragma unroll
  for (int r = 0; r < REP; ++r) {
    const float m_o = __shfl_xor_sync(0xffffffffu, m[r], off);
    const float l_o = __shfl_xor_sync(0xffffffffu, l[r], off);
    const float m_new = fmaxf(m[r], m_o);
    const float a = m[r] == -INFINITY ? 0.f : __expf(m[r] - m_new);
    const float b = m_o == -INFINITY ? 0.f : __expf(m_o - m_new);
    l[r] = l[r] * a + l_o * b;
#pragma unroll
    for (int e = 0; e < EPL; ++e) {
      acc[r][e] = acc[r][e] * a + __shfl_xor_sync(0xffffffffu, acc[r][e], off) * b;
    }
    m[r] = m_new;
  }
}

// ... then the warps: each publishes (m, l, acc); every thread finishes some outputs.
__shared__ float s_m[WARPS][REP];
__shared__ float s_l[WARPS][REP];
__shared__ float s_acc[WARPS][REP][D];
if (slot == 0) {
#pragma unroll
  for (int r = 0; r < REP; ++r) {
    if (lane == 0) {
      s_m[warp][r] = m[r];
      s_l[warp][r] = l[r];
    }
#pragma unroll
    for (int e = 0; e < EPL; ++e) {
      if (e < valid) s_acc[warp][r][d0 + e] = acc[r][e];
    }
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
  out[((size_t)seq * n_kv * REP + kvh * REP + r) * D + d] =
      vxa::from_float<T>(den > 0.f ? num / den : 0.f);
}
