// Body of the read-only kernel behind benchmarks/down_layout.py: the feed-forward kernel's down
// phase (vexel_core/quant/kernels/cuda/feed_forward.cuh) without its arithmetic. A lane takes a
// (row, block) pair, PASS rows in flight a lane, the rows walked from the CTA's own offset, 8
// warps; each Q4_0 block's 16 bytes of quants and 2 of scale are folded by XOR (checked by the
// script, so the loads stay).
// TILED 0, BPR 2 (the engine): CTA c reads the two blocks of columns [64 c, 64 c + 64) of
// every row, rows of 1,024-element super-blocks (512 bytes of quants, then 32 scales): 32
// bytes of quants and 4 of scales a row, 8,064 bytes apart.
// TILED 0, BPR 4, G 2: two CTAs share four blocks (128 columns), each half the rows: 64 bytes
// of quants a row (what a CTA pair exchanging its slices through memory would read).
// TILED 0, BPR 4, G 1, half the CTAs: one CTA a pair reads the four blocks of every row (what
// the pair's second to finish would read, doing the down product for both; no waiting).
// TILED 1, BPR 2: the engine's blocks regrouped by CTA, [F / 64][N][2][16] quants then
// [F / 64][N][2] scales: a warp's 16 rows are 512 contiguous bytes of quants.
// G: CTAs sharing a column group, each 1 / G of the rows; F: a row's columns
constexpr int RPW = 32 / BPR, WARPS = 8;
static_assert((BPR == 2 && G == 1) || (BPR == 4 && !TILED), "down_layout.cu: see the ways");
const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, t = lane % BPR;
const int c = blockIdx.x, ctas = gridDim.x;
const int group = c / G, rows = N / G, row0 = (c % G) * rows;
const size_t row_bytes = size_t(F) / 1024 * 576;
const int jb = BPR * group + t;  // the block's place in a row: super-block jb / 32, block jb % 32
const int rot = (c * rows / ctas) & ~15;
uint32_t acc = 0;
for (int r0 = warp * RPW * PASS; r0 < rows; r0 += WARPS * RPW * PASS) {
  uint4 q[PASS];
  unsigned short d[PASS];
#pragma unroll
  for (int p = 0; p < PASS; ++p) {
    int row = r0 + p * RPW + lane / BPR + rot;
    row = row0 + (row < rows ? row : row - rows);
    const uint8_t* qa;
    const uint8_t* da;
    if (TILED) {
      qa = w + (size_t(c) * N + row) * 32 + 16 * t;
      da = w + size_t(ctas) * N * 32 + (size_t(c) * N + row) * 4 + 2 * t;
    } else {
      const uint8_t* sb = w + size_t(row) * row_bytes + size_t(jb / 32) * 576;
      qa = sb + 16 * (jb % 32);
      da = sb + 512 + 2 * (jb % 32);
    }
    asm volatile("ld.global.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(q[p].x), "=r"(q[p].y), "=r"(q[p].z), "=r"(q[p].w) : "l"(qa));
    asm volatile("ld.global.L1::no_allocate.u16 %0, [%1];" : "=h"(d[p]) : "l"(da));
  }
#pragma unroll
  for (int p = 0; p < PASS; ++p) acc ^= q[p].x ^ q[p].y ^ q[p].z ^ q[p].w ^ uint32_t(d[p]);
}
for (int offset = 16; offset > 0; offset >>= 1) acc ^= __shfl_xor_sync(0xffffffffu, acc, offset);
if (lane == 0) out[c * WARPS + warp] = acc;
