// Body of gemv_int8 on the RMS norm of the residual stream (XPRE 3; template arguments as
// gemv_int8.cu's): x and delta the stream, nw the norm's weight, eps [1]; y the product (ACT 1
// or 2: gated, half the rows), residual the stream's next base T(x + delta).
vx::gemv_int8<GGML_TYPE, T, WARPS, STAGES, PER_LANE, KCAP, XREG, ACT, 3>(w, x, y, w_shape[0], w_shape[1], vx::NormIn<T>{delta, nw, eps, residual});
