# Session 8, call A (fresh machine): llama.cpp builds in the background (the peers script
# with no model only builds; ~5.5 min) while the GPU tests run: compiled decode steps against
# eager ones, the engine, attention, and the quantized kernels.
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/lc
(bash .devkit/peers/llamacpp.sh > /tmp/lc/build-bg.log 2>&1; echo $? > /tmp/lc/built) &
for t in test_compiled_decode test_engine test_attention_backends test_attention_kernels; do
  timeout 100 python3 -m pytest -q -p no:cacheprovider --tb=short tests/$t.py 2>&1 | tail -4
done
timeout 330 python3 -m pytest -q -p no:cacheprovider --tb=line tests/test_quant_kernels.py 2>&1 | tail -4
wait
echo "llama.cpp build rc $(cat /tmp/lc/built)"
