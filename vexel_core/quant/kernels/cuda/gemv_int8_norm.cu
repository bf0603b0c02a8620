// Body of gemv_int8 with the AddNorm epilogue (gemv_int8.cuh; template arguments as
// gemv_int8.cu's, ACT 0): h = residual + W x and normed = rms_norm(h) * nw, for a pre-norm
// block. scratch: uint32 [1 + CTAs], zero before the first launch and left zero by each.
static_assert(ACT == 0, "the AddNorm epilogue follows the plain product");
vx::AddNorm<T> e{residual, nw, eps[0], h, normed, const_cast<uint32_t*>(scratch)};
vx::gemv_int8<GGML_TYPE, T, WARPS, STAGES, PER_LANE, KCAP, XREG, 0, XPRE>(w, x, &e, w_shape[0], w_shape[1]);
vx::add_norm_finish<WARPS>(e, w_shape[0]);
