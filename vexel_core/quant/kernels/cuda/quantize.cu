// Body of the activation-quantization kernel (template argument: T): one thread per 32 values.
vx::quantize<T>(x, xq, xd, x_shape[0] * (x_shape[1] / 32));
