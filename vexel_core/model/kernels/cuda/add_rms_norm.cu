// vxn::add_rms_norm (add_rms_norm.cuh); MLX copies this body on every launch: one call.
vxn::add_rms_norm<T, PER>(x, x_shape, delta, w, eps, residual, normed);
