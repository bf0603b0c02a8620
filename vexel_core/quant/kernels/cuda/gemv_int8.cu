// Body of the one-row matrix-vector kernel with int8 activations (template arguments:
// GGML_TYPE, T, WARPS, STAGES, PER_LANE, KCAP, XREG, ACT; ACT 1 or 2: gated, y holds half the
// rows).
vx::gemv_int8<GGML_TYPE, T, WARPS, STAGES, PER_LANE, KCAP, XREG, ACT>(w, x, y, w_shape[0], w_shape[1]);
