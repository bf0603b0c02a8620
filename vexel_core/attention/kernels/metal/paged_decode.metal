// Paged decode attention for Apple GPUs: the same algorithm, names and tiling as
// ../cuda/paged_decode.cu (one threadgroup per (sequence, KV head), WARPS simdgroups of 32
// walking every WARPS-th token with an online softmax, merged in threadgroup memory).
// NEVER COMPILED OR RUN: no Apple Silicon machine exists where this project is built.
constexpr int E = (D + 31) / 32;
const uint lane = thread_position_in_threadgroup.x & 31;
const uint warp = thread_position_in_threadgroup.x >> 5;
const int n_kv = k_pool_shape[1];
const int seq = threadgroup_position_in_grid.x / n_kv;
const int kvh = threadgroup_position_in_grid.x % n_kv;
const int n_blocks = tables_shape[1];
const float scale = fparams[0];
const float softcap = fparams[1];
const int window = iparams[0];
const int ctx = ctx_lens[seq];
const int first = window > 0 ? max(0, ctx - window) : 0;

float qv[REP][E];
for (int r = 0; r < REP; ++r) {
  for (int e = 0; e < E; ++e) {
    const int d = lane + 32 * e;
    qv[r][e] = d < D ? float(q[(size_t(seq) * n_kv * REP + kvh * REP + r) * D + d]) * scale : 0.f;
  }
}
float m[REP], l[REP], acc[REP][E];
for (int r = 0; r < REP; ++r) {
  m[r] = -INFINITY;
  l[r] = 0.f;
  for (int e = 0; e < E; ++e) acc[r][e] = 0.f;
}
for (int t = first + int(warp); t < ctx; t += WARPS) {
  const int block = tables[size_t(seq) * n_blocks + t / BS];
  const size_t row = (size_t(block) * BS + t % BS) * n_kv + kvh;
  float kv[E], vv[E];
  for (int e = 0; e < E; ++e) {
    const int d = lane + 32 * e;
    kv[e] = d < D ? float(k_pool[row * D + d]) : 0.f;
    vv[e] = d < D ? float(v_pool[row * D + d]) : 0.f;
  }
  for (int r = 0; r < REP; ++r) {
    float s = 0.f;
    for (int e = 0; e < E; ++e) s += qv[r][e] * kv[e];
    s = simd_sum(s);
    if (softcap > 0.f) s = softcap * precise::tanh(s / softcap);
    const float m_new = max(m[r], s);
    const float corr = exp(m[r] - m_new);
    const float p = exp(s - m_new);
    l[r] = l[r] * corr + p;
    for (int e = 0; e < E; ++e) acc[r][e] = acc[r][e] * corr + p * vv[e];
    m[r] = m_new;
  }
}
threadgroup float s_m[WARPS][REP];
threadgroup float s_l[WARPS][REP];
threadgroup float s_acc[WARPS][REP][D];
for (int r = 0; r < REP; ++r) {
  if (lane == 0) {
    s_m[warp][r] = m[r];
    s_l[warp][r] = l[r];
  }
  for (int e = 0; e < E; ++e) {
    const int d = lane + 32 * e;
    if (d < D) s_acc[warp][r][d] = acc[r][e];
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
