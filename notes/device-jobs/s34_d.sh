# Session 34, main with F32 files computing in float32 on a GPU (activation_dtype), the server
# tests' first GPU run with it, and the probe of the split merge's counts. Carry
# [".devkit/wheels", ".devkit/setup.sh", ".devkit/extra"] with notes/bench and
# vexel_core/assets/vexel-tiny.gguf moved out of the tree (64 MiB): tests of the shipped model
# fail for its absence ("is missing"), and say nothing here.
#   source .devkit/setup.sh && bash notes/device-jobs/s34_d.sh
# 1. s34_counts_probe.py: test_engine's last tests then test_the_split_merges_counts, the order
#    in which s34_b found counts(1) holding a 1; then fresh zeros and counts read back.
# 2. down_layout.py again, each launch evaluated alone (s34_a's 48 launches an evaluation ran
#    at the same time: MLX's CUDA graph runs launches that share no data concurrently).
# 3. What F32 files computing in float32 changes: the server modules and the architectures'
#    F32 checks against llama.cpp (the budget left, 250 s, holds no more).
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/vx
t0=$(date +%s)
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/vexel-site \
  .devkit/extra/*.whl 2>&1 | grep -v WARN
(cd benchmarks && timeout 60 python3 down_layout.py --rounds 2 2>&1) | grep -v -i warn \
  | tee $OUT/down_layout.txt | tail -9
echo "== down_layout rc ${PIPESTATUS[0]} after $(( $(date +%s) - t0 )) s"
PYTHONPATH=notes/device-jobs:$PYTHONPATH timeout 40 python3 -m pytest -q -s -p no:cacheprovider \
  -p s34_counts_probe tests/test_engine.py tests/test_kernel_arrays.py \
  -k "change_no_token or split_merges" > $OUT/probe.txt 2>&1
echo "== probe rc $? after $(( $(date +%s) - t0 )) s"
grep -E "FRESH|COUNTS|passed|failed" $OUT/probe.txt | cut -c1-240
timeout 95 python3 -m pytest -v -n 8 --dist load -p no:cacheprovider --tb=short -rfE \
  tests/test_server.py tests/test_server_lifecycle.py tests/test_client.py \
  tests/test_llama_vs_llamacpp.py tests/test_phi_vs_llamacpp.py tests/test_gemma_vs_llamacpp.py \
  -k "not (F16 or BF16 or Q8_0 or Q4_0 or Q4_K or Q5_K or Q6_K)" > $OUT/suite.txt 2>&1
echo "== suite rc $? after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/suite.txt)"
grep -E "^(FAILED|ERROR) | FAILED | ERROR " $OUT/suite.txt | cut -c1-200 | head -40
gzip $OUT/suite.txt
