// Body of the matrix-vector kernel with int8 activations (template arguments: GGML_TYPE, T,
// WARPS, STAGES, PER_LANE, KCAP, XREG, ACT, XPRE, XROWS; ACT 1 or 2: gated, y holds half the
// rows; XPRE 1 or 2: x is round_x's uint8 buffer, T the output's dtype; XROWS activation rows).
vx::gemv_int8<GGML_TYPE, T, WARPS, STAGES, PER_LANE, KCAP, XREG, ACT, XPRE, XROWS>(w, x, y, w_shape[0], w_shape[1]);
