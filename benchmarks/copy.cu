// Body of the copy kernel that measures the device's copy bandwidth: one 16-byte load and
// store per thread (src is uint32 with a length divisible by 4).
const size_t n = size_t(src_shape[0]) / 4;
const size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
if (i < n) reinterpret_cast<uint4*>(dst)[i] = reinterpret_cast<const uint4*>(src)[i];
