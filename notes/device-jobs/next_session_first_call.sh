# Proposed first call of the next session (not run yet): the GPU-side checks of session 4's
# unmeasured changes, with llama.cpp building meanwhile for a second call (E2-style benches).
#   source .devkit/setup.sh && bash notes/device-jobs/next_session_first_call.sh
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/lc /tmp/vx && tar xJf .devkit/peers/llamacpp-src.tar.xz -C /tmp/lc
(cd /tmp/lc/llama.cpp && cmake -B build -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
   -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_CURL=OFF -DLLAMA_BUILD_SERVER=OFF \
   >/tmp/lc/cmake.log 2>&1 && cmake --build build -j14 --target llama-bench llama-batched-bench \
   >/tmp/lc/build.log 2>&1; echo $? > /tmp/lc/built) &
# The engine's own tests on the GPU (the empty-array fix), then the kernels'.
timeout 240 python3 -m pytest -q -p no:cacheprovider tests/test_engine.py tests/test_sampling.py \
  tests/test_kv_blocks.py tests/test_attention_kernels.py tests/test_attention_backends.py \
  tests/test_linear.py 2>&1 | tail -8
python3 -c "
from pathlib import Path
from vexel_core.bench.random_model import write_random_model
for dt in ('bf16', 'q4_0'):
    write_random_model(Path('/tmp/vx') / f'random-llama3-8b-{dt}.gguf', 'llama3-8b', dt)"
wait
echo "llama.cpp build rc $(cat /tmp/lc/built)"
# Second call: notes/device-jobs/s4_e2.sh (three engines, bf16 and q4_0, one request).
