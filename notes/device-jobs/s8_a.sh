# Session 8, call A (fresh machine): llama.cpp builds in the background (the peers script
# with no model only builds; ~5.5 min) while the GPU tests of this session's changes run
# (compiled decode steps against eager ones, the engine, the new gemv_int8 test tilings) and
# the gemv_int8 tiling sweep runs under Nsight Compute (s8_kernel_sweep.sh; kernel times do
# not depend on the busy host).
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/lc
(bash .devkit/peers/llamacpp.sh > /tmp/lc/build-bg.log 2>&1; echo $? > /tmp/lc/built) &
for t in test_compiled_decode test_engine; do
  timeout 100 python3 -m pytest -q -p no:cacheprovider --tb=short tests/$t.py 2>&1 | tail -4
done
bash notes/device-jobs/s8_kernel_sweep.sh
timeout 120 python3 -m pytest -q -p no:cacheprovider --tb=line tests/test_quant_kernels.py -k "int8" 2>&1 | tail -4
wait
echo "llama.cpp build rc $(cat /tmp/lc/built)"
