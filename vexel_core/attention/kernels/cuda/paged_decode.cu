// Paged decode attention: one query token per sequence, keys and values read through the
// block table, never gathered. Template arguments: T (element type), D (head size), REP
// (query heads per KV head), BS (tokens per KV block), WARPS (warps per CTA).
//
// One CTA per (sequence, KV head). Each warp walks every WARPS-th token of the sequence with
// an online softmax for the REP query heads that share this KV head; a lane holds the
// elements lane, lane + 32, ... of each row (coalesced reads of a row per warp). The warps'
// partial results are merged in shared memory at the end.
constexpr int E = (D + 31) / 32;  // elements of a row per lane
const int lane = threadIdx.x & 31;
const int warp = threadIdx.x >> 5;
const int n_kv = k_pool_shape[1];
const int seq = blockIdx.x / n_kv;
const int kvh = blockIdx.x % n_kv;
const int n_blocks = tables_shape[1];
const float scale = fparams[0];
const float softcap = fparams[1];  // 0: none
const int window = iparams[0];     // 0: none
const int ctx = ctx_lens[seq];
const int first = window > 0 ? max(0, ctx - window) : 0;

float qv[REP][E];
#pragma unroll
for (int r = 0; r < REP; ++r) {
  const T* qrow = q + ((size_t)seq * n_kv * REP + kvh * REP + r) * D;
#pragma unroll
  for (int e = 0; e < E; ++e) {
    const int d = lane + 32 * e;
    qv[r][e] = d < D ? static_cast<float>(qrow[d]) * scale : 0.f;
  }
}
float m[REP], l[REP], acc[REP][E];
#pragma unroll
for (int r = 0; r < REP; ++r) {
  m[r] = -INFINITY;
  l[r] = 0.f;
#pragma unroll
  for (int e = 0; e < E; ++e) acc[r][e] = 0.f;
}

for (int t = first + warp; t < ctx; t += WARPS) {
  const int block = tables[(size_t)seq * n_blocks + t / BS];
  const size_t row = ((size_t)block * BS + t % BS) * n_kv + kvh;
  const T* krow = k_pool + row * D;
  const T* vrow = v_pool + row * D;
  float kv[E], vv[E];
#pragma unroll
  for (int e = 0; e < E; ++e) {
    const int d = lane + 32 * e;
    kv[e] = d < D ? static_cast<float>(krow[d]) : 0.f;
    vv[e] = d < D ? static_cast<float>(vrow[d]) : 0.f;
  }
#pragma unroll
  for (int r = 0; r < REP; ++r) {
    float s = 0.f;
#pragma unroll
    for (int e = 0; e < E; ++e) s += qv[r][e] * kv[e];
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) s += __shfl_xor_sync(0xffffffffu, s, off);
    if (softcap > 0.f) s = softcap * tanhf(s / softcap);
    const float m_new = fmaxf(m[r], s);
    const float corr = __expf(m[r] - m_new);
    const float p = __expf(s - m_new);
    l[r] = l[r] * corr + p;
#pragma unroll
    for (int e = 0; e < E; ++e) acc[r][e] = acc[r][e] * corr + p * vv[e];
    m[r] = m_new;
  }
}

// Merge the warps: each publishes (m, l, acc); then every thread finishes some outputs.
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
  for (int e = 0; e < E; ++e) {
    const int d = lane + 32 * e;
    if (d < D) s_acc[warp][r][d] = acc[r][e];
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
  out[((size_t)seq * n_kv * REP + kvh * REP + r) * D + d] = static_cast<T>(den > 0.f ? num / den : 0.f);
}
