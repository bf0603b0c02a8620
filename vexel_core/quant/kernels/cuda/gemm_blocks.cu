// Body of the few-row product of a format's own blocks on the tensor cores (template
// arguments: GGML_TYPE, T, WK, MT, STAGES).
vx::gemm_blocks<typename vx::FormatOf<GGML_TYPE>::type, T, WK, MT, STAGES>(
    w, x, y, w_shape[0], w_shape[1], x_shape[0]);
