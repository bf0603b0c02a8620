# Session 46, call 1: s46_a.sh (q and k stacked where v's format differs, Q4_K_M one and two
# requests, against the tree before 3f11408, alternated), then the GPU tests of every file but
# test_quant_kernels.py (call 2 runs it on the tree with next/int8-legacy). Timing first, on a
# quiet host. Needs old_tree/ (s46_a.sh's header). Carry [".devkit/wheels", ".devkit/setup.sh"]
# after `tree_slim.sh out` (the shipped model stays: test_kernel_arrays and test_training read it).
#   source .devkit/setup.sh && bash notes/device-jobs/s46_1.sh
: "${OUT:?set OUT to the output folder}"
bash notes/device-jobs/s46_a.sh
bash notes/device-jobs/gpu_tests.sh \
  "200 tests/test_attention_kernels.py tests/test_feed_forward.py tests/test_norm_kernels.py tests/test_kv_pool.py -m gpu -n 6" \
  "200 tests/test_gemm_blocks.py tests/test_gemm_packed.py tests/test_gemv_packed.py tests/test_linear.py tests/test_device_memory.py tests/test_kernel_arrays.py tests/test_training.py -m gpu -n 6"
