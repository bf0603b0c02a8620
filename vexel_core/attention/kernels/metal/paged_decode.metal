// Paged decode attention for Apple GPUs: the same algorithm, names and tiling as
// ../cuda/paged_decode.cu (one threadgroup per (sequence, KV head); a row spread over LPT
// lanes of EPL elements, TPW tokens per simdgroup; lane groups with their own online softmax,
// U tokens loaded ahead; merged by shuffles, then in threadgroup memory). VEC is accepted
// for the same template but unused: element loads (the compiler may widen them).
// NEVER COMPILED OR RUN: no Apple Silicon machine exists where this project is built.
constexpr int LPT = EPL >= D ? 1 : (2 * EPL >= D ? 2 : (4 * EPL >= D ? 4 : (8 * EPL >= D ? 8 : (16 * EPL >= D ? 16 : 32))));
constexpr int TPW = 32 / LPT;
constexpr int GROUPS = WARPS * TPW;
const int lane = int(thread_position_in_threadgroup.x & 31);
const int warp = int(thread_position_in_threadgroup.x >> 5);
const int slot = lane / LPT;
const int d0 = (lane % LPT) * EPL;
const int valid = D - d0;
const int group = warp * TPW + slot;
const int n_kv = k_pool_shape[1];
const int seq = threadgroup_position_in_grid.x / n_kv;
const int kvh = threadgroup_position_in_grid.x % n_kv;
const int n_blocks = tables_shape[1];
const float scale = fparams[0];
const float softcap = fparams[1];
const int window = iparams[0];
const int ctx = ctx_lens[seq];
const int first = window > 0 ? max(0, ctx - window) : 0;

float qv[REP][EPL];
for (int r = 0; r < REP; ++r) {
  const size_t base = (size_t(seq) * n_kv * REP + kvh * REP + r) * D + d0;
  for (int e = 0; e < EPL; ++e) qv[r][e] = e < valid ? float(q[base + e]) * scale : 0.f;
}
float m[REP], l[REP], acc[REP][EPL];
for (int r = 0; r < REP; ++r) {
  m[r] = -INFINITY;
  l[r] = 0.f;
  for (int e = 0; e < EPL; ++e) acc[r][e] = 0.f;
}
for (int k = 0; first + warp * TPW + k * GROUPS < ctx; k += U) {
  float kf[U][EPL], vf[U][EPL];
  bool ok[U];
  for (int u = 0; u < U; ++u) {
    const int t = first + group + (k + u) * GROUPS;
    ok[u] = t < ctx;
    size_t row = 0;
    if (ok[u]) {
      const int block = tables[size_t(seq) * n_blocks + t / BS];
      row = ((size_t(block) * BS + t % BS) * n_kv + kvh) * D + d0;
    }
    for (int e = 0; e < EPL; ++e) {
      const bool in = ok[u] && e < valid;
      kf[u][e] = in ? float(k_pool[row + e]) : 0.f;
      vf[u][e] = in ? float(v_pool[row + e]) : 0.f;
    }
  }
  for (int u = 0; u < U; ++u) {
    for (int r = 0; r < REP; ++r) {
      float s = 0.f;
      for (int e = 0; e < EPL; ++e) s += qv[r][e] * kf[u][e];
      for (ushort off = LPT / 2; off > 0; off >>= 1) s += simd_shuffle_xor(s, off);
      if (!ok[u]) continue;
      if (softcap > 0.f) s = softcap * precise::tanh(s / softcap);
      const float m_new = max(m[r], s);
      const float corr = exp(m[r] - m_new);
      const float p = exp(s - m_new);
      l[r] = l[r] * corr + p;
      for (int e = 0; e < EPL; ++e) acc[r][e] = acc[r][e] * corr + p * vf[u][e];
      m[r] = m_new;
    }
  }
}
for (ushort off = LPT; off < 32; off <<= 1) {
  for (int r = 0; r < REP; ++r) {
    const float m_o = simd_shuffle_xor(m[r], off);
    const float l_o = simd_shuffle_xor(l[r], off);
    const float m_new = max(m[r], m_o);
    const float a = m[r] == -INFINITY ? 0.f : exp(m[r] - m_new);
    const float b = m_o == -INFINITY ? 0.f : exp(m_o - m_new);
    l[r] = l[r] * a + l_o * b;
    for (int e = 0; e < EPL; ++e) acc[r][e] = acc[r][e] * a + simd_shuffle_xor(acc[r][e], off) * b;
    m[r] = m_new;
  }
}
threadgroup float s_m[WARPS][REP];
threadgroup float s_l[WARPS][REP];
threadgroup float s_acc[WARPS][REP][D];
if (slot == 0) {
  for (int r = 0; r < REP; ++r) {
    if (lane == 0) {
      s_m[warp][r] = m[r];
      s_l[warp][r] = l[r];
    }
    for (int e = 0; e < EPL; ++e) {
      if (e < valid) s_acc[warp][r][d0 + e] = acc[r][e];
    }
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
  out[(size_t(seq) * n_kv * REP + kvh * REP + r) * D + d] = T(den > 0.f ? num / den : 0.f);
}
