// Body of the matrix-vector kernel (template arguments: GGML_TYPE, T, MT, ROWS, WARPS, STAGES).
// NEVER COMPILED OR RUN by Apple's Metal compiler or on a GPU: no Apple machine exists where
// this project is developed. Emulated on the CPU as C++ (tests/emulation.py, metal_program).
typedef typename vx::FormatOf<GGML_TYPE>::type F;
threadgroup uint4 stage_words[WARPS * STAGES * ROWS * vx::Chunk<F>::SLOT / 16];  // 16-aligned
threadgroup float2 scales[WARPS * ROWS * vx::Chunk<F>::GROUPS];
threadgroup float partial[WARPS * MT * ROWS];
vx::gemv<F, T, MT, ROWS, WARPS, STAGES>(
    w, x, y, w_shape[0], w_shape[1], x_shape[0],
    reinterpret_cast<threadgroup uint8_t*>(stage_words), scales, partial,
    thread_index_in_simdgroup, simdgroup_index_in_threadgroup, threadgroup_position_in_grid.x);
