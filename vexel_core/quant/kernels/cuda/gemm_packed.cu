// Body of the few-row product of repacked Q4_0 on the tensor cores (template arguments: T, WN,
// WK, NT, MT, AHEAD, ACT; ACT 1 or 2: gated, y holds half the rows).
vx::gemm_packed<T, WN, WK, NT, MT, AHEAD, ACT>(w, x, y, w_shape[0], w_shape[1], x_shape[0]);
