// Body of the dequantization kernel (template arguments: GGML_TYPE, T, WARPS).
vx::dequant<typename vx::FormatOf<GGML_TYPE>::type, T, WARPS>(w, y, w_shape[0], w_shape[1]);
