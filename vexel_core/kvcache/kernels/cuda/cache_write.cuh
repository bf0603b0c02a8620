namespace vxw {
// A pool handed to the kernel as an input (MLX declares inputs const), written in place.
template <typename U>
__device__ inline U* writable(const U* p) { return const_cast<U*>(p); }
}  // namespace vxw
