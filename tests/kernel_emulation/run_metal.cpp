// Runs Metal kernels on the CPU (metal_on_cpu.h); built and driven by tests/emulation.py
// (build_metal, run_metal), which writes metal_kernels.inc: the kernels' header and bodies
// wrapped as mx.fast.metal_kernel wraps them, and the table KERNELS of their launchers.
// Usage (each input's bytes on stdin, from the start of its buffer):
//   run_metal KERNEL GRID THREADGROUP INPUTS [OFFSET BYTES NDIM DIM... STRIDE...]...
//     OUTPUTS OUT_BYTES...  > outputs, then the inputs' bytes as the kernel left them
// GRID and THREADGROUP: threads along x, as given to the kernel's call; OFFSET: where the
// input starts in its buffer (an MLX view), which is 16-byte aligned like a Metal buffer;
// BYTES: from there to the end of its last element; STRIDE: in elements, as MLX passes them
// to a body that reads `NAME_strides`. The outputs are filled with 0xFF bytes first: NaN in
// float32, float16 and bfloat16. The inputs come back because kernels may write into them
// (the KV pools, in place). Reports the threadgroup memory the kernel declares on stderr.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "metal_on_cpu.h"

struct Buffers {
  std::vector<std::unique_ptr<uint4[]>> storage;  // 16-byte aligned
  std::vector<const uint8_t*> inputs;
  std::vector<size_t> input_bytes;  // from each input's start
  std::vector<std::vector<int>> shapes;
  std::vector<std::vector<int64_t>> strides;
  std::vector<uint8_t*> outs;
  uint groups = 0, threads = 0, grid = 0;

  template <class T>
  const T* input(int i) const { return reinterpret_cast<const T*>(inputs[i]); }
  const int* shape(int i) const { return shapes[i].data(); }
  const int64_t* stride(int i) const { return strides[i].data(); }
  template <class T>
  T* output(int i) const { return reinterpret_cast<T*>(outs[i]); }
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
    std::vector<int64_t> stride;
    for (int d = 0; d < ndim && a < argc; ++d) shape.push_back(atoi(argv[a++]));
    for (int d = 0; d < ndim && a < argc; ++d) stride.push_back(atoll(argv[a++]));
    uint8_t* buffer = b.allocate(offset + bytes);
    if (fread(buffer, 1, offset + bytes, stdin) != offset + bytes) return 4;
    b.inputs.push_back(buffer + offset);
    b.input_bytes.push_back(bytes);
    b.shapes.push_back(shape);
    b.strides.push_back(stride);
  }
  if (a >= argc || a + 1 + atoi(argv[a]) != argc) return 2;
  std::vector<size_t> out_bytes;
  for (int o = 0, n = atoi(argv[a]); o < n; ++o) {
    out_bytes.push_back(atol(argv[a + 1 + o]));
    b.outs.push_back(b.allocate(out_bytes.back()));
    std::memset(b.outs.back(), 0xFF, out_bytes.back());
  }
  // MLX dispatches threadgroups of min(THREADGROUP, GRID) threads, the last one partial where
  // they do not divide the grid; the emulation needs whole simdgroups
  const long threads = std::min(tg, grid);
  if (threads % 32) return 5;
  b.groups = uint((grid + threads - 1) / threads);
  b.threads = uint(threads);
  b.grid = uint(grid);
  for (const auto& [kernel_name, run] : KERNELS) {
    if (name == kernel_name) {
      run(b);
      for (size_t o = 0; o < out_bytes.size(); ++o) fwrite(b.outs[o], 1, out_bytes[o], stdout);
      for (size_t i = 0; i < b.inputs.size(); ++i) fwrite(b.inputs[i], 1, b.input_bytes[i], stdout);
      fprintf(stderr, "threadgroup memory: %zu bytes\n", threadgroup_bytes);
      return 0;
    }
  }
  return 3;  // not built into this binary
}
