// Body of the read-only kernel behind benchmarks/read_ceiling.py: every thread reads LOADS
// 16-byte words a round, all issued before any is used, strided by the grid so that a warp's
// loads are contiguous, and folds them by XOR (which the script checks, so the loads cannot be
// optimised away). A warp writes one word. src is uint32 with a length divisible by 4.
const size_t n = size_t(src_shape[0]) / 4;
const uint4* words = reinterpret_cast<const uint4*>(src);
const size_t stride = size_t(gridDim.x) * blockDim.x;
size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
uint32_t acc = 0;
for (; i + (LOADS - 1) * stride < n; i += LOADS * stride) {
  uint4 v[LOADS];
#pragma unroll
  for (int j = 0; j < LOADS; ++j) v[j] = words[i + j * stride];
#pragma unroll
  for (int j = 0; j < LOADS; ++j) acc ^= v[j].x ^ v[j].y ^ v[j].z ^ v[j].w;
}
for (; i < n; i += stride) {
  const uint4 v = words[i];
  acc ^= v.x ^ v.y ^ v.z ^ v.w;
}
for (int offset = 16; offset > 0; offset >>= 1) acc ^= __shfl_xor_sync(0xffffffffu, acc, offset);
if ((threadIdx.x & 31) == 0) out[(size_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32] = acc;
