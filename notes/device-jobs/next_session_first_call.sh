# Proposed first call of the next session (session 5 left it unrun). One test file per command
# with generous limits (session 5's call E lost both test runs to 150 s limits on a fresh
# machine); llama.cpp builds in the background for a second call (E2-style, s4_e2.sh).
#   source .devkit/setup.sh && bash notes/device-jobs/next_session_first_call.sh
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/lc /tmp/vx && tar xJf .devkit/peers/llamacpp-src.tar.xz -C /tmp/lc
(cd /tmp/lc/llama.cpp && cmake -B build -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
   -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_CURL=OFF -DLLAMA_BUILD_SERVER=OFF \
   >/tmp/lc/cmake.log 2>&1 && cmake --build build -j8 --target llama-bench llama-batched-bench \
   >/tmp/lc/build.log 2>&1; echo $? > /tmp/lc/built) &
# 1. What changed after session 5's last call (split decode's outputs, copy-on-write through
#    the in-place write, gpu.on_cuda), then the quantized kernels after device_resident.
for t in test_attention_kernels test_kv_pool test_engine; do
  timeout 240 python3 -m pytest -q -p no:cacheprovider --tb=line tests/$t.py 2>&1 | tail -3
done
timeout 240 python3 -m pytest -q -p no:cacheprovider --tb=line tests/test_quant_kernels.py 2>&1 | tail -4
# 2. Did the weights reach device memory? The token table's gathers (52 ms per 8192-token
#    step before) and the lm_head's nvjet_256x8 (44 ms x 3 before) should be gone.
timeout 240 python3 benchmarks/gpu_timeline.py --bin-ms 100 --top 10 --where gather --where nvjet_sm90_tst_256x8 -- bench --random llama3-8b --dtype bf16 -n 64 --prompt-len 512 --output-len 128 --kv-cache-memory 16GiB > $OUT/timeline-bf16.txt 2>&1
grep -v "━" $OUT/timeline-bf16.txt | grep -E "tok/s|TTFT|ITL|span|grid|launches" | cut -c1-200
# 3. Host-made step metadata: is a page fault per array per step real?
timeout 60 python3 benchmarks/host_arrays.py
wait
echo "llama.cpp build rc $(cat /tmp/lc/built)"
# Second call: bash notes/device-jobs/s4_e2.sh (three engines, bf16 and q4_0, one request).
