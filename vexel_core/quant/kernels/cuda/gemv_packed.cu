// Body of the one-row product of repacked Q4_0 on x rounded beforehand (template arguments: T,
// WARPS, PASS, ACT; ACT 1 or 2: gated, y holds half the rows).
vx::gemv_packed<T, WARPS, PASS, ACT>(w, xr, y, w_shape[0], w_shape[1]);
