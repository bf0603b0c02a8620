// Body of the matrix-vector kernel (template arguments: GGML_TYPE, T, MT, ROWS, WARPS, STAGES).
vx::gemv<typename vx::FormatOf<GGML_TYPE>::type, T, MT, ROWS, WARPS, STAGES>(
    w, x, y, w_shape[0], w_shape[1], x_shape[0]);
