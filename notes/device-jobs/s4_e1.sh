# Session 4, call E1: llama.cpp build (kept on the warm machine for E2) while the GPU runs the
# attention kernel tests and the engine's equality tests, and the random models are written.
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/lc /tmp/vx && tar xJf .devkit/peers/llamacpp-src.tar.xz -C /tmp/lc
(cd /tmp/lc/llama.cpp && cmake -B build -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_CURL=OFF -DLLAMA_BUILD_SERVER=OFF >/tmp/lc/cmake.log 2>&1 && cmake --build build -j14 --target llama-bench llama-batched-bench >/tmp/lc/build.log 2>&1; echo $? > /tmp/lc/built) &
timeout 240 python3 -m pytest -q -p no:cacheprovider tests/test_attention_kernels.py tests/test_engine.py 2>&1 | tail -6
python3 -c "
from pathlib import Path
from vexel_core.bench.random_model import write_random_model
for dt in ('bf16', 'q4_0'):
    write_random_model(Path('/tmp/vx') / f'random-llama3-8b-{dt}.gguf', 'llama3-8b', dt)
print('models written')"
wait
echo "llama.cpp build rc $(cat /tmp/lc/built)"; tail -3 /tmp/lc/build.log
