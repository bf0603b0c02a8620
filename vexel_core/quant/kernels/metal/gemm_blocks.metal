// Body of the few-row product of a format's own blocks on simdgroup matrices (template
// arguments: GGML_TYPE, T, WK, MT, STAGES).
// NEVER COMPILED OR RUN by Apple's Metal compiler or on a GPU: no Apple machine exists where
// this project is developed. Emulated on the CPU as C++ (tests/emulation.py, metal_program).
typedef typename vx::FormatOf<GGML_TYPE>::type F;
threadgroup uint4 stage_words[WK * STAGES * vx::GemmChunk<F>::SLOT];  // 16 rows a slot, aligned
threadgroup float2 scales[WK * 16 * vx::GemmChunk<F>::GROUPS];
threadgroup float a[WK * 16 * vx::GEMM_SPAN];
threadgroup float xs[WK * MT * vx::GEMM_SPAN];
threadgroup float partial[WK * 16 * MT];
vx::gemm_blocks<F, T, WK, MT, STAGES>(
    w, x, y, w_shape[0], w_shape[1], x_shape[0],
    reinterpret_cast<threadgroup uint8_t*>(stage_words), scales, a, xs, partial,
    thread_index_in_simdgroup, simdgroup_index_in_threadgroup, threadgroup_position_in_grid.x);
