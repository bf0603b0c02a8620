// vxa::paged_decode (paged_decode_kernel.cuh); MLX copies this body on every launch: one call.
vxa::paged_decode<T, D, REP, BS, WARPS, PREFETCH>(
    q, q_shape, q_strides, k_pool, k_pool_shape, v_pool, tables, tables_shape, tables_strides,
    ctx_lens, ctx_lens_strides, fparams, iparams, rope_freqs, rope_freqs_shape, counters, after,
    k_new, k_new_strides, v_new, v_new_strides, new_slots, new_slots_strides, out, part, done);
