# Planned for session 35 (written in session 34, whose device time ran out before it), main,
# a cold machine. Carry [".devkit/wheels", ".devkit/setup.sh", ".devkit/extra"] after
# `bash notes/device-jobs/tree_slim.sh out --model` (64 MiB; no test here needs the shipped
# model); `tree_slim.sh back` after the call.
#   source .devkit/setup.sh && bash notes/device-jobs/s35_a.sh
# 1. down_layout.py, each launch evaluated alone: s34_a evaluated 48 launches at once, which
#    MLX's CUDA graph ran concurrently (131 us a launch of the engine's way, where the kernel's
#    whole down phase takes ~15): its ratios decided nothing.
# 2. The split merge's counts: test_kernel_arrays (its GPU test compiles the paged decode's
#    variants nine times and reads one pair's counts after each; s34_b found a 1 left there
#    while compile_variants evaluated its launches together).
# 3. What session 34 changed without a GPU: F32 files compute in float32 there (the server
#    modules, whose llama.cpp comparisons failed in bfloat16; the architectures' F32 checks;
#    test_engine, whose model is F32), and the client test's tolerance.
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/vx
t0=$(date +%s)
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/vexel-site \
  .devkit/extra/*.whl 2>&1 | grep -v WARN
(cd benchmarks && timeout 60 python3 down_layout.py --rounds 2 2>&1) | grep -v -i warn \
  | tee $OUT/down_layout.txt | tail -9
echo "== down_layout rc ${PIPESTATUS[0]} after $(( $(date +%s) - t0 )) s"
timeout 240 python3 -m pytest -v -n 8 --dist load -p no:cacheprovider --tb=short -rfE \
  tests/test_kernel_arrays.py tests/test_server.py tests/test_server_lifecycle.py \
  tests/test_client.py tests/test_engine.py tests/test_llama_vs_llamacpp.py \
  tests/test_phi_vs_llamacpp.py tests/test_gemma_vs_llamacpp.py \
  -k "not (F16 or BF16 or Q8_0 or Q4_0 or Q4_K or Q5_K or Q6_K)" > $OUT/tests.txt 2>&1
echo "== tests rc $? after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/tests.txt)"
grep -E "^(FAILED|ERROR) | FAILED | ERROR " $OUT/tests.txt | cut -c1-200 | head -40
gzip $OUT/tests.txt
