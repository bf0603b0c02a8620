// Body of the one-row gated feed-forward kernel (feed_forward.cuh; template arguments T, ACT,
// K, F): h and normed from the fused gate/up rows wgu, the down rows wd and x.
vx::feed_forward<T, ACT, K, F>(wgu, wd, x, residual, nw, eps[0], const_cast<uint32_t*>(scratch),
                               h, normed, int(wd_shape[0]));
