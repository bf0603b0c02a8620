// Merges the spans of a split paged decode: the same as ../cuda/paged_decode_merge.cu.
// NEVER COMPILED OR RUN by Apple's Metal compiler or on a GPU: no Apple machine exists where
// this project is developed. Emulated on the CPU as C++ after paged_decode.metal's split
// launches (tests/emulation.py, MetalRecorder; tests/test_attention_kernels.py).
const int i = int(thread_position_in_grid.x);
const int heads = part_shape[0] * part_shape[1];
const int splits = part_shape[2];
if (i < heads * D) {
  const int head = i / D;
  const int d = i % D;
  const size_t base = size_t(head) * splits * (2 + D);
  float big = -INFINITY;
  for (int s = 0; s < splits; ++s) big = max(big, part[base + s * (2 + D)]);
  float num = 0.f, den = 0.f;
  for (int s = 0; s < splits; ++s) {
    const float m = part[base + s * (2 + D)];
    const float f = m == -INFINITY ? 0.f : exp(m - big);
    num += part[base + s * (2 + D) + 2 + d] * f;
    den += part[base + s * (2 + D) + 1] * f;
  }
  out[i] = T(den > 0.f ? num / den : 0.f);
}
