// Merges the spans of a split paged decode (paged_decode.cu with S > 1): part[B, Hq, S, 2 + D]
// holds per span its score maximum, its sum of exponentials and its unnormalised output.
// One thread per output element. Template arguments: T (output type), D (head size).
const int i = blockIdx.x * blockDim.x + threadIdx.x;
const int heads = part_shape[0] * part_shape[1];
const int splits = part_shape[2];
if (i < heads * D) {
  const int head = i / D;
  const int d = i % D;
  const float* p = part + (size_t)head * splits * (2 + D);
  float big = -INFINITY;
  for (int s = 0; s < splits; ++s) big = fmaxf(big, p[s * (2 + D)]);
  float num = 0.f, den = 0.f;
  for (int s = 0; s < splits; ++s) {
    const float m = p[s * (2 + D)];
    const float f = m == -INFINITY ? 0.f : __expf(m - big);  // a span with no tokens
    num += p[s * (2 + D) + 2 + d] * f;
    den += p[s * (2 + D) + 1] * f;
  }
  out[i] = vxa::from_float<T>(den > 0.f ? num / den : 0.f);
}
