// One activation row rounded to 8-bit integers: the matrix-vector product of one request's
// decoding for Q4_0 and Q8_0, with llama.cpp's arithmetic (mmvq): four 8-bit products per
// __dp4a, the weights' integers never turned into floats.
//
// Why a second kernel: at one activation row the float kernel (kernels.cuh) spends about 4.7
// instructions per weight and is issue-bound at ~38% of the copy bandwidth; here a weight
// costs about 1.2 (notes/gpu-kernels.md, session 7). Rounding x is a pass over all of it, so
// the CTAs are few (a grid of at most `CTAS`) and long-lived: each rounds x into shared memory
// once while its first weight copies fly, then its warps stream many weight rows through a
// pipeline of asynchronous copies. (Session 3 rounded x in each of 3,584 short CTAs and lost.)
//
// x is rounded per 32-element block, as llama.cpp's quantize_q8_1: d = amax / 127 and
// q = rint(x * (127 / amax)), both divisions IEEE, the product rounded once (fmaf with 1.5 * 2^23
// rounds half to even without the float-to-int unit). The block's sum of q is kept so that
// Q4_0's offset (it stores n + 8) costs one multiply per block.
//
// Warp w of the grid owns weight rows w, w + W, w + 2W, ... (W warps in all); a lane decodes one
// 32-element block of each staged 1024-element chunk; the warp reduces at each row's end.
// Rows and the staged blocks start on even bytes (GGUF block sizes are even and MLX's buffers
// aligned), so a block is read as 4-byte words from its 4-byte floor plus one byte permute.

namespace vx {

// A format's 32-element block as eight words of four signed bytes (word i: elements 4i..4i+3),
// read from WORDS shared-memory words starting at the block's 4-byte floor; SEL is the byte
// permute that drops the 2-byte scale (and the 2-byte misalignment, when there is one).
template <int GGML_TYPE>
struct Int8Blocks;

template <>
struct Int8Blocks<2> {  // Q4_0: f16 d, then 16 bytes (element j in the low nibble, j + 16 high)
  static constexpr int BB = 18, WORDS = 5, OFFSET = -8;  // values are d * (n - 8)
  __device__ __forceinline__ static void ints(const uint32_t* w, uint32_t sel, int (&q)[8]) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const uint32_t b = __byte_perm(w[i], w[i + 1], sel);
      q[i] = int(b & 0x0F0F0F0Fu);
      q[i + 4] = int((b >> 4) & 0x0F0F0F0Fu);
    }
  }
};

template <>
struct Int8Blocks<8> {  // Q8_0: f16 d, then 32 signed bytes
  static constexpr int BB = 34, WORDS = 9, OFFSET = 0;
  __device__ __forceinline__ static void ints(const uint32_t* w, uint32_t sel, int (&q)[8]) {
#pragma unroll
    for (int i = 0; i < 8; ++i) q[i] = int(__byte_perm(w[i], w[i + 1], sel));
  }
};

// Rounds the 32 values at x into q (32 bytes, 16-byte aligned); returns d, and the sum of q in *sum.
template <class T>
__device__ __forceinline__ float round_block(const T* x, int8_t* q, int* sum) {
  float v[32];
#pragma unroll
  for (int k = 0; k < 8; ++k) {
    const float4 f = load4(x + 4 * k);
    v[4 * k] = f.x; v[4 * k + 1] = f.y; v[4 * k + 2] = f.z; v[4 * k + 3] = f.w;
  }
  float amax = 0.0f;
#pragma unroll
  for (int k = 0; k < 32; ++k) amax = fmaxf(amax, fabsf(v[k]));
  const float inv = amax > 0.0f ? __fdiv_rn(127.0f, amax) : 0.0f;
  uint32_t words[8];
  int s = 0;
#pragma unroll
  for (int k = 0; k < 8; ++k) {
    int n[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      n[j] = int(__float_as_uint(fmaf(v[4 * k + j], inv, 12582912.0f)) - 0x4B400000u);
      s += n[j];
    }
    words[k] = __byte_perm(__byte_perm(n[0], n[1], 0x0040), __byte_perm(n[2], n[3], 0x0040), 0x5410);
  }
  uint4* out = reinterpret_cast<uint4*>(q);
  out[0] = make_uint4(words[0], words[1], words[2], words[3]);
  out[1] = make_uint4(words[4], words[5], words[6], words[7]);
  *sum = s;
  return __fdiv_rn(amax, 127.0f);
}

template <int GGML_TYPE, class T, int WARPS, int STAGES, int KCAP>
__device__ __forceinline__ void gemv_int8(const uint8_t* w, const T* x, T* y, int N,
                                          int row_bytes) {
  using B = Int8Blocks<GGML_TYPE>;
  constexpr int BLOCKS = CHUNK_ELEMS / 32;  // one per lane
  constexpr int BYTES = BLOCKS * B::BB;
  constexpr int SLOT = (BYTES + 30) / 16 * 16;  // as Chunk<F>::SLOT: room for the offset
  __shared__ __align__(16) uint8_t stage[WARPS][STAGES][SLOT];
  __shared__ __align__(16) int8_t xq[KCAP];
  __shared__ float xd[KCAP / 32];
  __shared__ int xsum[KCAP / 32];

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int nb = row_bytes / B::BB;  // 32-element blocks per row
  const int nchunks = (nb + BLOCKS - 1) / BLOCKS;
  const int gw = int(blockIdx.x) * WARPS + warp, all = int(gridDim.x) * WARPS;
  const int items = gw < N ? ((N - 1 - gw) / all + 1) * nchunks : 0;  // (row, chunk) pairs

  // Two cursors over this warp's (row, chunk) pairs, advanced without division (a lane's
  // share of an item is one block: per-item index arithmetic is not negligible here).
  struct Cursor {
    int row, chunk;
    __device__ __forceinline__ size_t offset(int row_bytes) const {
      return size_t(row) * row_bytes + size_t(chunk) * BYTES;
    }
    __device__ __forceinline__ void next(int nchunks, int all) {
      if (++chunk == nchunks) { chunk = 0; row += all; }
    }
  };
  Cursor ahead{gw, 0}, here{gw, 0};
  auto issue = [&](int slot) {
    const int len = (min(nb, (ahead.chunk + 1) * BLOCKS) - ahead.chunk * BLOCKS) * B::BB;
    stage_bytes(stage[warp][slot], w + ahead.offset(row_bytes), len, lane);
    ahead.next(nchunks, all);
  };

  // The first weight copies fly while the CTA rounds x.
#pragma unroll
  for (int i = 0; i < STAGES - 1; ++i) {
    if (i < items) issue(i);
    cp_async_commit();
  }
  for (int b = threadIdx.x; b < nb; b += WARPS * 32) {
    xd[b] = round_block(x + 32 * b, xq + 32 * b, xsum + b);
  }
  __syncthreads();

  const int base = int(reinterpret_cast<uintptr_t>(w) & 15);
  float acc = 0.0f;
  for (int i = 0; i < items; ++i) {
    if (i + STAGES - 1 < items) issue((i + STAGES - 1) % STAGES);
    cp_async_commit();
    cp_async_wait<STAGES - 1>();
    __syncwarp();

    const int b = here.chunk * BLOCKS + lane;
    if (b < nb) {
      // Offsets within a 16-byte aligned slot: the block's first byte, its 4-byte floor.
      const int at = int((base + here.offset(row_bytes)) & 15) + lane * B::BB;
      const uint32_t* words = reinterpret_cast<const uint32_t*>(stage[warp][i % STAGES]) + (at >> 2);
      const bool shifted = at & 2;
      uint32_t v[B::WORDS];
#pragma unroll
      for (int k = 0; k < B::WORDS; ++k) v[k] = words[k];
      int q[8];
      B::ints(v, shifted ? 0x7654u : 0x5432u, q);
      const uint4 xa = reinterpret_cast<const uint4*>(xq + 32 * b)[0];
      const uint4 xb = reinterpret_cast<const uint4*>(xq + 32 * b)[1];
      int dot = B::OFFSET * xsum[b];
      dot = __dp4a(q[0], int(xa.x), dot);
      dot = __dp4a(q[1], int(xa.y), dot);
      dot = __dp4a(q[2], int(xa.z), dot);
      dot = __dp4a(q[3], int(xa.w), dot);
      dot = __dp4a(q[4], int(xb.x), dot);
      dot = __dp4a(q[5], int(xb.y), dot);
      dot = __dp4a(q[6], int(xb.z), dot);
      dot = __dp4a(q[7], int(xb.w), dot);
      const float dw = half_to_float(shifted ? v[0] >> 16 : v[0] & 0xFFFFu);
      acc = fmaf(dw * xd[b], float(dot), acc);
    }
    if (here.chunk == nchunks - 1) {
#pragma unroll
      for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xFFFFFFFFu, acc, o);
      if (lane == 0) store1(y + here.row, acc);
      acc = 0.0f;
    }
    here.next(nchunks, all);
    __syncwarp();  // the next issue overwrites this stage
  }
}

}  // namespace vx
