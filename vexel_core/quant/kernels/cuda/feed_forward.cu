// Body of the one-row gated feed-forward kernel (feed_forward.cuh; template arguments T, ACT,
// K, N): h and normed from the fused gate/up rows wgu, the down rows wd and x.
vx::feed_forward<T, ACT, K, N>(wgu, wd, x, residual, nw, eps[0], const_cast<uint32_t*>(scratch),
                               h, normed, int(wgu_shape[0]) / 2);
