# Session 9, call C1 (fresh machine): GPU tests of this session's kernels while llama.cpp
# builds for call C2: add_rms_norm; gemv_int8 with its staging slots in dynamic shared memory;
# paged decode with warps chosen by the launch (every warp count, one and three spans).
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/lc
(bash .devkit/peers/llamacpp.sh > /tmp/lc/build-bg.log 2>&1; echo $? > /tmp/lc/built) &
timeout 100 python3 -m pytest -q -p no:cacheprovider --tb=short tests/test_norm_kernels.py 2>&1 | tail -2
timeout 200 python3 -m pytest -q -p no:cacheprovider --tb=line tests/test_quant_kernels.py -k "int8 and gguf_kernel" 2>&1 | tail -3
timeout 240 python3 -m pytest -q -p no:cacheprovider --tb=short tests/test_attention_kernels.py -m gpu 2>&1 | tail -4
echo "llama.cpp build: $(cat /tmp/lc/built 2>/dev/null || echo still running)"
