// Helpers of add_rms_norm.cu, given to mx.fast.cuda_kernel as its header.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace vxn {

__device__ __forceinline__ float warp_sum(float x) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) x += __shfl_xor_sync(0xffffffffu, x, off);
  return x;
}

}  // namespace vxn
