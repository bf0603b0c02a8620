# Planned for session 34 (written in session 33), main, right after s34_a.sh on the warm
# machine: carry [".devkit/setup.sh", ".devkit/extra"] (not the wheels: setup.sh finds them
# installed) with notes/bench moved out of the tree. .devkit/extra holds what the test suite
# needs beyond the devkit's wheels (notes/device-jobs/devkit_fill.sh fills it). Session 33's
# runs lacked diskcache (llama_cpp failed to import) and httpx/openai (test_client,
# test_server and test_server_lifecycle were not even collected).
#   source .devkit/setup.sh && bash notes/device-jobs/s34_b.sh
# The whole suite but test_quant_kernels (s34_a.sh), one process a module: first whether every
# module is collected, then the run with the failures' tracebacks. Session 33 fixed what its
# runs found (tests/arch_checks.py's tolerances by dtype, test_linear, test_quant_formats,
# test_bench_cli, test_chat_cli): this is their first run on the GPU.
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/vx
t0=$(date +%s)
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/vexel-site \
  .devkit/extra/*.whl || echo "extra wheels: install failed"
python3 -c "import llama_cpp, xdist, openai, httpx; print('extra wheels: ok')"
timeout 60 python3 -m pytest --collect-only -q -p no:cacheprovider > $OUT/collect.txt 2>&1
echo "== collected: $(tail -1 $OUT/collect.txt)"; grep -E "^ERROR|Error" $OUT/collect.txt | head
timeout $(( 560 - ($(date +%s) - t0) )) python3 -m pytest -v -n 8 --dist loadfile \
  -p no:cacheprovider --tb=short -rfE --durations=12 --deselect tests/test_quant_kernels.py \
  > $OUT/suite.txt 2>&1
echo "== suite rc $? after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/suite.txt)"
grep -E "^(FAILED|ERROR) " $OUT/suite.txt | cut -c1-200 | head -30
gzip $OUT/suite.txt
