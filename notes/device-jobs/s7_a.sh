# Session 7, call A: the GPU tests on the final code (the quantized kernels compile every
# variant: ~4.5 min on a fresh machine) while llama.cpp builds in the background for call B;
# then one request on Q4_0 beside mlx-lm, once the build is done (the build contends for the host).
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/lc && tar xJf .devkit/peers/llamacpp-src.tar.xz -C /tmp/lc
(cd /tmp/lc/llama.cpp && cmake -B build -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
   -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_CURL=OFF -DLLAMA_BUILD_SERVER=OFF \
   >/tmp/lc/cmake.log 2>&1 && cmake --build build -j8 --target llama-bench llama-batched-bench \
   >/tmp/lc/build.log 2>&1; echo $? > /tmp/lc/built) &
timeout 330 python3 -m pytest -q -p no:cacheprovider --tb=line tests/test_quant_kernels.py 2>&1 | tail -5
for t in test_attention_kernels test_attention_backends test_server_lifecycle test_engine; do
  timeout 60 python3 -m pytest -q -p no:cacheprovider --tb=line tests/$t.py 2>&1 | tail -2
done
wait
echo "llama.cpp build rc $(cat /tmp/lc/built)"
timeout 100 vexel bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 256 --kv-cache-memory 16GiB --compare mlx-lm --json-out $OUT/q4_0-bs1.json 2>&1 | grep -E "tok/s|ITL|TTFT|x$|rror"
