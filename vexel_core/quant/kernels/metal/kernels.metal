// The two GGUF kernels for Apple GPUs: the Metal twin of cuda/kernels.cuh, with the same names,
// the same tiling (template arguments MT, ROWS, WARPS, STAGES; a "warp" is a simdgroup of 32)
// and the same formats (common/formats.h). Differences forced by Metal: threadgroup arrays are
// declared in the kernel body (gemv.metal, dequant.metal) and passed in; staging uses plain
// 2-byte loads (no cp.async), so STAGES only rotates buffers; the library defaults to
// STAGES = 1 to stay inside Apple GPUs' 32 KiB of threadgroup memory.
// NEVER COMPILED OR RUN by Apple's Metal compiler or on a GPU: no Apple machine exists where
// this project is developed. Emulated on the CPU as C++ (tests/emulation.py, metal_program).

namespace vx {

constant constexpr int CHUNK_ELEMS = 1024;

template <class F>
struct Chunk {
  static constant constexpr int BLOCKS = CHUNK_ELEMS / F::BE;
  static constant constexpr int ITEMS = BLOCKS * F::P / 32;
  static constant constexpr int GROUPS = BLOCKS * F::G;
  static constant constexpr int BYTES = BLOCKS * F::BB;
  static constant constexpr int SLOT = (BYTES + 30) / 16 * 16;
};

template <class F>
inline void decode_groups(threadgroup const uint8_t* blocks, int valid, threadgroup float2* out,
                          uint lane) {
  for (int k = int(lane); k < Chunk<F>::GROUPS; k += 32) {
    const int b = k / F::G;
    if (b < valid) out[k] = F::group(blocks + b * F::BB, k % F::G);
  }
}

// stage: [WARPS][STAGES][ROWS][SLOT] bytes, scales: [WARPS][ROWS][GROUPS],
// partial: [WARPS][MT][ROWS].
template <class F, class T, int MT, int ROWS, int WARPS, int STAGES>
inline void gemv(const device uint8_t* w, const device T* x, device T* y, int N, int row_bytes,
                 int M, threadgroup uint8_t* stage, threadgroup float2* scales,
                 threadgroup float* partial, uint lane, uint warp, uint cta) {
  typedef Chunk<F> C;
  const int nb = row_bytes / F::BB, K = nb * F::BE;
  const int mgroups = (M + MT - 1) / MT;
  const int m0 = int(cta % uint(mgroups)) * MT;
  const int row0 = int(cta / uint(mgroups)) * ROWS;
  const int nchunks = (nb + C::BLOCKS - 1) / C::BLOCKS;
  const int mine = int(warp) < nchunks ? (nchunks - 1 - int(warp)) / WARPS + 1 : 0;

  float acc[MT][ROWS];
  for (int m = 0; m < MT; ++m)
    for (int r = 0; r < ROWS; ++r) acc[m][r] = 0.0f;

  for (int i = 0; i < mine; ++i) {
    const int c = int(warp) + i * WARPS;
    const int valid = metal::min(C::BLOCKS, nb - c * C::BLOCKS);
    threadgroup uint8_t* buf = stage + (int(warp) * STAGES + i % STAGES) * ROWS * C::SLOT;
    threadgroup float2* sc = scales + int(warp) * ROWS * C::GROUPS;
    for (int r = 0; r < ROWS; ++r) {
      // Rows past N (the last threadgroup) read row N - 1 and are never written.
      const device uint8_t* src =
          w + size_t(metal::min(row0 + r, N - 1)) * row_bytes + size_t(c) * C::BYTES;
      stage_bytes(buf + r * C::SLOT, src, valid * F::BB, lane);
    }
    metal::simdgroup_barrier(metal::mem_flags::mem_threadgroup);
    for (int r = 0; r < ROWS; ++r) decode_groups<F>(buf + r * C::SLOT, valid, sc + r * C::GROUPS, lane);
    metal::simdgroup_barrier(metal::mem_flags::mem_threadgroup);

    for (int it = 0; it < C::ITEMS; ++it) {
      const int item = int(lane) + 32 * it, b = item / F::P, p = item % F::P;
      if (b >= valid) continue;
      float q[ROWS][8];
      float2 s0[ROWS], s1[ROWS];
      const int g0 = b * F::G + F::group_of(p, 0), g1 = b * F::G + F::group_of(p, 1);
      for (int r = 0; r < ROWS; ++r) {
        F::piece(buf + r * C::SLOT + b * F::BB, p, q[r]);
        s0[r] = sc[r * C::GROUPS + g0];
        s1[r] = sc[r * C::GROUPS + g1];
      }
      const int e = c * CHUNK_ELEMS + b * F::BE;
      const int e0 = e + F::elem_of(p, 0), e1 = e + F::elem_of(p, 1);
      for (int m = 0; m < MT; ++m) {
        if (m0 + m >= M) break;
        const device T* xm = x + size_t(m0 + m) * K;
        const float4 a = load4(xm + e0), bx = load4(xm + e1);
        for (int r = 0; r < ROWS; ++r) {
          const float da = metal::dot(float4(q[r][0], q[r][1], q[r][2], q[r][3]), a);
          const float db = metal::dot(float4(q[r][4], q[r][5], q[r][6], q[r][7]), bx);
          float t = metal::fma(s0[r].x, da, acc[m][r]);
          t = metal::fma(s1[r].x, db, t);
          if (F::HAS_MIN) {
            t = metal::fma(s0[r].y, (a.x + a.y) + (a.z + a.w), t);
            t = metal::fma(s1[r].y, (bx.x + bx.y) + (bx.z + bx.w), t);
          }
          acc[m][r] = t;
        }
      }
    }
    metal::simdgroup_barrier(metal::mem_flags::mem_threadgroup);  // the next chunk overwrites buffers
  }

  for (int m = 0; m < MT; ++m)
    for (int r = 0; r < ROWS; ++r) {
      const float v = metal::simd_sum(acc[m][r]);
      if (lane == 0) partial[(int(warp) * MT + m) * ROWS + r] = v;
    }
  metal::threadgroup_barrier(metal::mem_flags::mem_threadgroup);
  const int tid = int(warp) * 32 + int(lane);
  if (tid < MT * ROWS) {
    const int m = tid / ROWS, r = tid % ROWS;
    float v = 0.0f;
    for (int k = 0; k < WARPS; ++k) v += partial[(k * MT + m) * ROWS + r];
    if (m0 + m < M && row0 + r < N) store1(y + size_t(m0 + m) * N + row0 + r, v);
  }
}

// stage: [WARPS][SLOT] bytes, scales: [WARPS][GROUPS].
template <class F, class T, int WARPS>
inline void dequant(const device uint8_t* w, device T* out, int N, int row_bytes,
                    threadgroup uint8_t* stage, threadgroup float2* scales, uint lane, uint warp,
                    uint cta) {
  typedef Chunk<F> C;
  const int nb = row_bytes / F::BB, K = nb * F::BE;
  const int nchunks = (nb + C::BLOCKS - 1) / C::BLOCKS;
  const long job = long(cta) * WARPS + long(warp);
  if (job >= long(N) * nchunks) return;  // whole simdgroups only: no threadgroup barrier below
  const int row = int(job / nchunks), c = int(job % nchunks);
  const int valid = metal::min(C::BLOCKS, nb - c * C::BLOCKS);

  threadgroup uint8_t* blk = stage + int(warp) * C::SLOT;
  threadgroup float2* sc = scales + int(warp) * C::GROUPS;
  const device uint8_t* src = w + size_t(row) * row_bytes + size_t(c) * C::BYTES;
  blk += stage_bytes(blk, src, valid * F::BB, lane);
  metal::simdgroup_barrier(metal::mem_flags::mem_threadgroup);
  decode_groups<F>(blk, valid, sc, lane);
  metal::simdgroup_barrier(metal::mem_flags::mem_threadgroup);

  device T* dst = out + size_t(row) * K + size_t(c) * CHUNK_ELEMS;
  for (int it = 0; it < C::ITEMS; ++it) {
    const int item = int(lane) + 32 * it, b = item / F::P, p = item % F::P;
    if (b >= valid) continue;
    float q[8];
    F::piece(blk + b * F::BB, p, q);
    const float2 s0 = sc[b * F::G + F::group_of(p, 0)];
    const float2 s1 = sc[b * F::G + F::group_of(p, 1)];
    device T* d = dst + b * F::BE;
    store4(d + F::elem_of(p, 0), metal::fma(s0.x, q[0], s0.y), metal::fma(s0.x, q[1], s0.y),
           metal::fma(s0.x, q[2], s0.y), metal::fma(s0.x, q[3], s0.y));
    store4(d + F::elem_of(p, 1), metal::fma(s1.x, q[4], s1.y), metal::fma(s1.x, q[5], s1.y),
           metal::fma(s1.x, q[6], s1.y), metal::fma(s1.x, q[7], s1.y));
  }
}

}  // namespace vx
