# Proposed first calls of the next session (session 6 left them unrun).
#   source .devkit/setup.sh && bash notes/device-jobs/next_session_first_call.sh
# 1. Did including the CUDA headers by path cut one request's step (expected ~1 ms of 6.4)?
#    A/B/A/B in one call, nothing else running (llama.cpp's build would contend for the host).
export VEXEL_CACHE=/tmp/vx
B="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 256 --kv-cache-memory 16GiB"
for round in 1 2; do
  for mode in include inline; do
    flag=$([ $mode = inline ] && echo --inline)
    timeout 90 python3 benchmarks/header_ab.py $flag $B --trace-steps $OUT/bs1-$mode-$round.jsonl 2>&1 | grep -E "generated tok/s|ITL"
    python3 - $OUT/bs1-$mode-$round.jsonl $mode <<'PY'
import json, sys, statistics as st
d = [json.loads(l) for l in open(sys.argv[1])][5:]
print(sys.argv[2], "median ms: build", round(st.median((r['launch_s'] - r['submit_s']) * 1e3 for r in d), 2),
      "submit", round(st.median(r['submit_s'] * 1e3 for r in d), 2),
      "interval", round(st.median((b['start_s'] - a['start_s']) * 1e3 for a, b in zip(d, d[1:])), 2))
PY
  done
done
# 2. llama.cpp builds in the background (for the second call) while the quantized kernels'
#    GPU tests run (they compile every variant: ~4.5 min on a fresh machine).
mkdir -p /tmp/lc && tar xJf .devkit/peers/llamacpp-src.tar.xz -C /tmp/lc
(cd /tmp/lc/llama.cpp && cmake -B build -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
   -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_CURL=OFF -DLLAMA_BUILD_SERVER=OFF \
   >/tmp/lc/cmake.log 2>&1 && cmake --build build -j8 --target llama-bench llama-batched-bench \
   >/tmp/lc/build.log 2>&1; echo $? > /tmp/lc/built) &
timeout 330 python3 -m pytest -q -p no:cacheprovider --tb=line tests/test_quant_kernels.py 2>&1 | tail -4
wait
echo "llama.cpp build rc $(cat /tmp/lc/built)"
# Second call, at once (warm machine): bash notes/device-jobs/s6_e.sh with --compare mlx-lm
# added to the Q4_0 batch (mlx-lm's 4-bit batch takes ~75 s): three engines on the final code.
