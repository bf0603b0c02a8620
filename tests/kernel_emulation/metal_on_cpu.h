// Just enough of Metal (and of what MLX's metal/utils.h gives kernels) to compile the real
// metal/*.metal sources of the library's kernels as C++20 for the CPU (tests/emulation.py,
// metal_program, wraps each body as mx.fast.metal_kernel does). Every Metal thread is a
// std::thread; one threadgroup runs at a time, so threadgroup arrays are static (the builder
// prefixes their declarations with `static`); simdgroups of 32 threads meet at real barriers,
// and simd_sum goes through memory.
#pragma once
// The standard headers come first: the address-space macros at the end of this file would
// break them (std::thread, a `device` parameter).
#include <algorithm>
#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <thread>
#include <type_traits>
#include <vector>

// Metal's address spaces are disjoint: a threadgroup pointer never converts to a device or
// thread one. tests/emulation.py (metal_address_space_errors) checks that the sources keep
// them apart by compiling them with -DVX_VOLATILE_THREADGROUP or -DVX_VOLATILE_DEVICE: that
// space becomes `volatile`, which C++ will not drop silently (nor these types' copies, given
// the copies below that the check adds; adding volatile passes, so a conversion into that
// space goes unseen). Syntax only: the emulation runs with plain memory.
#if defined(VX_VOLATILE_THREADGROUP) || defined(VX_VOLATILE_DEVICE)
#define VX_VOLATILE_COPIES(T)                                                           \
  T(const T&) = default;                                                                \
  T& operator=(const T&) = default;                                                     \
  T(const volatile T& o) { std::memcpy(this, const_cast<const T*>(&o), sizeof(T)); }   \
  T& operator=(const volatile T& o) { return *this = T(o); }                            \
  void operator=(const T& o) volatile { std::memcpy(const_cast<T*>(this), &o, sizeof(T)); } \
  void operator=(const volatile T& o) volatile { *this = T(o); }  /* device to device */
#define VX_VOLATILE_READ const volatile
#else
#define VX_VOLATILE_COPIES(T)
#define VX_VOLATILE_READ const
#endif

using uint = unsigned;
using ulong = uint64_t;
using ushort = uint16_t;
using uchar = uint8_t;
using half = _Float16;  // IEEE binary16 with round-to-nearest-even conversions, as Metal's
using float16_t = half;  // MLX's name for float16 (get_type_string)

struct bfloat16_t {  // MLX's bfloat16: float's top half, rounded to nearest even
  uint16_t bits;
  bfloat16_t() = default;
  bfloat16_t(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    bits = uint16_t((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
  }
  VX_VOLATILE_COPIES(bfloat16_t)
  explicit operator float() VX_VOLATILE_READ {
    const uint32_t u = uint32_t(bits) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
};

// Vector types with Metal's sizes and alignments (a uint4 or float4 is 16-byte aligned).
struct float2 {
  float x, y;
  float2() = default;
  float2(float a, float b) : x(a), y(b) {}
  VX_VOLATILE_COPIES(float2)
};
struct half4;
struct alignas(16) float4 {
  float x, y, z, w;
  float4() = default;
  float4(float a, float b, float c, float d) : x(a), y(b), z(c), w(d) {}
  explicit float4(half4 h);
  VX_VOLATILE_COPIES(float4)
};
struct alignas(8) half4 {
  half x, y, z, w;
  half4() = default;
  explicit half4(const float4& f) : x(half(f.x)), y(half(f.y)), z(half(f.z)), w(half(f.w)) {}
  VX_VOLATILE_COPIES(half4)
};
inline float4::float4(half4 h) : x(float(h.x)), y(float(h.y)), z(float(h.z)), w(float(h.w)) {}
struct char4 { int8_t x, y, z, w; };
struct alignas(16) uint4 {
  uint x, y, z, w;
  uint4() = default;
  VX_VOLATILE_COPIES(uint4)
};
struct ulong2 {
  ulong x, y;
  ulong2(ulong a, ulong b) : x(a), y(b) {}
};
struct uint3 { uint x, y, z; };

namespace metal {

enum class mem_flags { mem_none = 0, mem_device = 1, mem_threadgroup = 2 };
inline mem_flags operator|(mem_flags a, mem_flags b) { return mem_flags(int(a) | int(b)); }

template <class To, class From>
inline To as_type(From v) {
  static_assert(sizeof(To) == sizeof(From), "as_type reinterprets equal sizes");
  To r;
  std::memcpy(&r, &v, sizeof(To));
  return r;
}
inline float fma(float a, float b, float c) { return std::fma(a, b, c); }  // one rounding
template <class V>
inline V min(V a, V b) { return b < a ? b : a; }
template <class V>
inline V max(V a, V b) { return a < b ? b : a; }
inline float exp(float x) { return std::exp(x); }
inline float rsqrt(float x) { return 1.0f / std::sqrt(x); }
namespace precise {
inline float tanh(float x) { return std::tanh(x); }
inline float sin(float x) { return std::sin(x); }
inline float cos(float x) { return std::cos(x); }
}  // namespace precise
inline float dot(float4 a, float4 b) { return a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w; }

// This thread's simdgroup and threadgroup, set by launch().
struct Group {
  std::barrier<>* simd;
  std::barrier<>* threadgroup;
  float* simd_slots;  // 32 floats shared by the simdgroup's lanes
  uint lane, index;  // in the simdgroup, in the threadgroup
  uint position;     // the threadgroup's, in the grid
};
inline thread_local Group group;

inline void simdgroup_barrier(mem_flags) { group.simd->arrive_and_wait(); }
inline void threadgroup_barrier(mem_flags) { group.threadgroup->arrive_and_wait(); }
// The sum or maximum over the 32 lanes, the same value in each (the GPU's order of additions
// is its own).
template <class Op>
inline float simd_reduce(float v, Op op) {
  group.simd_slots[group.lane] = v;
  simdgroup_barrier(mem_flags::mem_threadgroup);
  float r = group.simd_slots[0];
  for (int i = 1; i < 32; ++i) r = op(r, group.simd_slots[i]);
  simdgroup_barrier(mem_flags::mem_threadgroup);
  return r;
}
inline float simd_sum(float v) { return simd_reduce(v, [](float a, float b) { return a + b; }); }
inline float simd_max(float v) { return simd_reduce(v, [](float a, float b) { return max(a, b); }); }

// Simdgroup matrices (float 8x8 only). Every lane holds the whole matrix here, where a GPU
// spreads it over the lanes in a layout of its own: loads read all of it, the product is
// computed whole in each lane, and lane 0 stores it. What a kernel can see stays the same: a
// matrix leaves a simdgroup only through simdgroup_store, and other lanes read what it wrote
// after a barrier, on a GPU as here. The sums' order is the emulation's (k ascending, one fma
// each); a GPU's is its own.
template <class T, int Cols, int Rows>
struct simdgroup_matrix {
  T v[Rows][Cols];
};
using simdgroup_float8x8 = simdgroup_matrix<float, 8, 8>;

template <class T, int Cols, int Rows>
inline simdgroup_matrix<T, Cols, Rows> make_filled_simdgroup_matrix(T value) {
  simdgroup_matrix<T, Cols, Rows> m;
  for (int r = 0; r < Rows; ++r)
    for (int c = 0; c < Cols; ++c) m.v[r][c] = value;
  return m;
}

// Rows of `elements_per_row` from src (device or threadgroup memory: any pointer to T, volatile
// in the address-space check); transposed, src's rows become the matrix's columns.
template <class Ptr, class T>
constexpr bool points_to = std::is_same_v<std::remove_cv_t<std::remove_pointer_t<Ptr>>, T>;

template <class T, int Cols, int Rows, class Ptr>
inline void simdgroup_load(simdgroup_matrix<T, Cols, Rows>& d, Ptr src,
                           ulong elements_per_row = Cols, ulong2 origin = ulong2(0, 0),
                           bool transpose_matrix = false) {
  static_assert(points_to<Ptr, T>, "simdgroup_load reads the matrix's own element type");
  src += origin.y * elements_per_row + origin.x;
  for (int r = 0; r < Rows; ++r)
    for (int c = 0; c < Cols; ++c)
      d.v[r][c] = transpose_matrix ? src[c * elements_per_row + r] : src[r * elements_per_row + c];
}

template <class T, int Cols, int Rows, class Ptr>
inline void simdgroup_store(const simdgroup_matrix<T, Cols, Rows>& m, Ptr dst,
                            ulong elements_per_row = Cols, ulong2 origin = ulong2(0, 0)) {
  static_assert(points_to<Ptr, T>, "simdgroup_store writes the matrix's own element type");
  if (group.lane != 0) return;
  dst += origin.y * elements_per_row + origin.x;
  for (int r = 0; r < Rows; ++r)
    for (int c = 0; c < Cols; ++c) dst[r * elements_per_row + c] = m.v[r][c];
}

// d = a * b + c
template <class T, int Cols, int K, int Rows>
inline void simdgroup_multiply_accumulate(simdgroup_matrix<T, Cols, Rows>& d,
                                          const simdgroup_matrix<T, K, Rows>& a,
                                          const simdgroup_matrix<T, Cols, K>& b,
                                          const simdgroup_matrix<T, Cols, Rows>& c) {
  simdgroup_matrix<T, Cols, Rows> out;
  for (int r = 0; r < Rows; ++r)
    for (int col = 0; col < Cols; ++col) {
      T sum = c.v[r][col];
      for (int k = 0; k < K; ++k) sum = fma(a.v[r][k], b.v[k][col], sum);
      out.v[r][col] = sum;
    }
  d = out;
}

}  // namespace metal

// The threadgroup memory a launch's kernel declares, in bytes (Apple GPUs give a threadgroup
// 32 KiB; run_metal.cpp reports it, tests/emulation.py checks it).
inline size_t threadgroup_bytes = 0;

// A threadgroup array (static here) as each threadgroup finds it: 0xFF bytes, NaN in floats,
// so that a read before any write shows. tests/emulation.py calls this after each declaration,
// where every thread passes; launch() has made the last threadgroup finish.
template <class A>
inline void poison_threadgroup_array(A& array) {
  if (metal::group.index == 0) {
    std::memset((void*)&array, 0xFF, sizeof(A));  // (void*): the check's volatile
    if (metal::group.position == 0) threadgroup_bytes += sizeof(A);
  }
  metal::threadgroup_barrier(metal::mem_flags::mem_threadgroup);
}

// The attributes a kernel may take ([[thread_index_in_simdgroup]] ...), for one thread.
struct ThreadPosition {
  uint thread_index_in_simdgroup, simdgroup_index_in_threadgroup, thread_index_in_threadgroup;
  uint3 thread_position_in_grid, thread_position_in_threadgroup;
  uint3 threadgroup_position_in_grid, threads_per_threadgroup;
};

// dispatch_threads(grid, threadgroup) as MLX calls it: body(position) on `threads` threads
// (whole simdgroups) for each of `groups` threadgroups, one threadgroup at a time (the threads
// meet at a barrier between them, as the static threadgroup arrays are reused). Threads past
// `grid` do not exist on the GPU (the last threadgroup is partial) and skip the body: exact
// for kernels without barriers (the merge of paged decode); one with barriers would wait for
// them forever (the library's kernels with barriers launch whole threadgroups).
template <class Body>
void launch(uint groups, uint threads, uint grid, Body body) {
  std::barrier<> threadgroup(threads), between_groups(threads);
  std::vector<std::unique_ptr<std::barrier<>>> simds;
  for (uint s = 0; s < threads / 32; ++s) simds.emplace_back(new std::barrier<>(32));
  std::vector<float> slots(threads);
  std::vector<std::thread> pool;
  for (uint t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      metal::group = {simds[t / 32].get(), &threadgroup, slots.data() + t / 32 * 32, t % 32, t, 0};
      ThreadPosition p{t % 32, t / 32, t, {0, 0, 0}, {t, 0, 0}, {0, 0, 0}, {threads, 1, 1}};
      for (uint g = 0; g < groups; ++g) {
        p.threadgroup_position_in_grid.x = metal::group.position = g;
        p.thread_position_in_grid.x = g * threads + t;
        if (p.thread_position_in_grid.x < grid) body(p);
        between_groups.arrive_and_wait();
      }
    });
  }
  for (auto& t : pool) t.join();
}

// Metal's address spaces: plain memory here (or volatile, in the check above). Macros,
// defined after every standard header.
#ifdef VX_VOLATILE_DEVICE
#define device volatile
#else
#define device
#endif
#ifdef VX_VOLATILE_THREADGROUP
#define threadgroup volatile
#else
#define threadgroup
#endif
#define constant
#define thread
