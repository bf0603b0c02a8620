// Body of x's rounding for gemv_int8's XPRE modes (template arguments: T, x's dtype; THREADS,
// a CTA's): one thread a 32-value block.
vx::round_x<T, THREADS>(x, y, x_shape[1]);
