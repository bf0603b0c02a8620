"""Session 52, call B: which L2 evict-first forms run on the H200 under MLX's NVRTC.
staged_attention.py's evict-first arm (createpolicy.fractional.L2::evict_first, then
cp.async.cg.shared.global.L2::cache_hint) stopped with cudaErrorIllegalInstruction in call A.
Each form copies 64 KB through shared memory, in its own process (an illegal instruction
poisons the context):  python3 notes/device-jobs/s52_evict.py FORM"""
import sys

import mlx.core as mx

POLICY = {
    "fraction": 'asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));',
    "nofraction": 'asm volatile("createpolicy.fractional.L2::evict_first.b64 %0;" : "=l"(pol));',
}
COPY = {
    "cp.async": 'asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, %2;"'
                ' ::"r"(dst), "l"(src), "l"(pol) : "memory");',
    "cp.async+size": 'asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, 16, %2;"'
                     ' ::"r"(dst), "l"(src), "l"(pol) : "memory");',
    "cp.async.plain": 'asm volatile("cp.async.cg.shared.global [%0], [%1], 16;"'
                      ' ::"r"(dst), "l"(src) : "memory");',
    "ld": 'uint4 v; asm volatile("ld.global.L2::cache_hint.v4.u32 {%0,%1,%2,%3}, [%4], %5;"'
          ' : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(src), "l"(pol));'
          ' *reinterpret_cast<uint4*>(buf + threadIdx.x * 16) = v;',
}


def run(policy: str, copy: str) -> None:
    body = f"""
    __shared__ __align__(16) uint8_t buf[256 * 16];
    uint64_t pol = 0;
    {POLICY[policy]}
    const uint8_t* s = reinterpret_cast<const uint8_t*>(x) + blockIdx.x * sizeof(buf);
    const uint8_t* src = s + threadIdx.x * 16;
    const unsigned dst = unsigned(__cvta_generic_to_shared(buf + threadIdx.x * 16));
    {COPY[copy]}
    asm volatile("cp.async.commit_group;" ::: "memory");
    asm volatile("cp.async.wait_all;" ::: "memory");
    __syncthreads();
    reinterpret_cast<uint4*>(out)[blockIdx.x * 256 + threadIdx.x] =
        reinterpret_cast<const uint4*>(buf)[threadIdx.x];
    """
    k = mx.fast.cuda_kernel(name=f"vx_evict_{policy}_{copy.replace('.', '_').replace('+', '_')}",
                            input_names=["x"], output_names=["out"], source=body)
    x = mx.random.randint(0, 1 << 30, (16 * 1024,), dtype=mx.int32)
    (out,) = k(inputs=[x], grid=(16 * 256, 1, 1), threadgroup=(256, 1, 1),
               output_shapes=[x.shape], output_dtypes=[mx.int32])
    print(f"{policy:10s} {copy:14s}", "same" if mx.array_equal(out, x).item() else "DIFFERENT")


if __name__ == "__main__":
    run(sys.argv[1], sys.argv[2])
