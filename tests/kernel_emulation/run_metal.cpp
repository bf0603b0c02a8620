// Runs Metal kernels on the CPU (metal_on_cpu.h); built and driven by tests/emulation.py
// (build_metal, run_metal), which writes metal_kernels.inc: the kernels' header and bodies
// wrapped as mx.fast.metal_kernel wraps them, and the table KERNELS of their launchers.
// Usage (each input's bytes on stdin, from the start of its buffer):
//   run_metal KERNEL GRID THREADGROUP INPUTS [OFFSET BYTES NDIM DIM...]... OUT_BYTES  > output
// GRID and THREADGROUP: threads along x, as given to the kernel's call; OFFSET: where the
// input starts in its buffer (an MLX view), which is 16-byte aligned like a Metal buffer. The
// output is filled with 0xFF bytes first: NaN in float32, float16 and bfloat16. Reports the
// threadgroup memory the kernel declares on stderr.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "metal_on_cpu.h"

struct Buffers {
  std::vector<std::unique_ptr<uint4[]>> storage;  // 16-byte aligned
  std::vector<const uint8_t*> inputs;
  std::vector<std::vector<int>> shapes;
  uint8_t* out = nullptr;
  uint groups = 0, threads = 0;

  template <class T>
  const T* input(int i) const { return reinterpret_cast<const T*>(inputs[i]); }
  const int* shape(int i) const { return shapes[i].data(); }
  template <class T>
  T* output() const { return reinterpret_cast<T*>(out); }
  uint8_t* allocate(size_t bytes) {
    storage.emplace_back(new uint4[bytes / 16 + 1]);
    return reinterpret_cast<uint8_t*>(storage.back().get());
  }
};
using Kernel = void (*)(const Buffers&);

#include "metal_kernels.inc"

int main(int argc, char** argv) {
  if (argc < 6) return 2;  // see the usage above
  const std::string name = argv[1];
  const long grid = atol(argv[2]), tg = atol(argv[3]);
  const int n_inputs = atoi(argv[4]);
  Buffers b;
  int a = 5;
  for (int i = 0; i < n_inputs; ++i) {
    if (a + 3 > argc) return 2;
    const size_t offset = atol(argv[a]), bytes = atol(argv[a + 1]);
    const int ndim = atoi(argv[a + 2]);
    a += 3;
    std::vector<int> shape;
    for (int d = 0; d < ndim && a < argc; ++d) shape.push_back(atoi(argv[a++]));
    uint8_t* buffer = b.allocate(offset + bytes);
    if (fread(buffer, 1, offset + bytes, stdin) != offset + bytes) return 4;
    b.inputs.push_back(buffer + offset);
    b.shapes.push_back(shape);
  }
  if (a + 1 != argc) return 2;
  const size_t out_bytes = atol(argv[a]);
  b.out = b.allocate(out_bytes);
  std::memset(b.out, 0xFF, out_bytes);
  // MLX dispatches threadgroups of min(THREADGROUP, GRID) threads; these kernels' grids are
  // whole threadgroups of whole simdgroups
  const long threads = std::min(tg, grid);
  if (threads % 32 || grid % threads) return 5;
  b.groups = uint(grid / threads);
  b.threads = uint(threads);
  for (const auto& [kernel_name, run] : KERNELS) {
    if (name == kernel_name) {
      run(b);
      fwrite(b.out, 1, out_bytes, stdout);
      fprintf(stderr, "threadgroup memory: %zu bytes\n", threadgroup_bytes);
      return 0;
    }
  }
  return 3;  // not built into this binary
}
