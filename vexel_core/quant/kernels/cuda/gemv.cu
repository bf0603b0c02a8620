// Body of the matrix-vector kernel (template arguments: GGML_TYPE, T, MT, ROWS, WARPS, STAGES);
// xq and xd come from the quantize kernel.
vx::gemv<typename vx::FormatOf<GGML_TYPE>::type, T, MT, ROWS, WARPS, STAGES>(
    w, xq, xd, y, w_shape[0], w_shape[1], xd_shape[0]);
