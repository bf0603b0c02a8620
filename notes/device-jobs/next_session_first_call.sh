# Proposed first calls of the next session (session 6 left them unrun): three calls, one
# after another on the warm machine.
#   source .devkit/setup.sh && bash notes/device-jobs/next_session_first_call.sh 1   (then 2, then 3)
export VEXEL_CACHE=/tmp/vx
case "$1" in
1)
  # Did including the CUDA headers by path cut one request's step (expected ~1 ms of 6.4)?
  # A/B/A/B, nothing else running (a build would contend for the host). Then two MLX
  # settings and one experiment for the same workload, and the engine's GPU tests (mixed
  # steps are pipelined since session 6's last call; part 2 tests the attention changes).
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
  # MLX's CUDA backend records kernels into CUDA graphs, committed every 100 operations or
  # 1,000 MB of inputs (weights count: a bf16 8B step is ~16 commits), instantiated or
  # updated at each commit. One request's submit time (2.7 ms) may be that, not the nodes:
  # try direct launches, and fewer, larger graphs.
  MLX_USE_CUDA_GRAPHS=0 timeout 90 vexel $B 2>&1 | grep -E "generated tok/s|ITL" | sed 's/^/no graphs: /'
  MLX_MAX_OPS_PER_BUFFER=1000 MLX_MAX_MB_PER_BUFFER=100000 timeout 90 vexel $B 2>&1 | grep -E "generated tok/s|ITL" | sed 's/^/big graphs: /'
  # Does replaying each block's MLP half as a compiled graph cut the host's build time?
  timeout 90 python3 benchmarks/compile_ab.py --compile-mlp $B 2>&1 | grep -E "generated tok/s|ITL" | sed 's/^/compiled MLP: /'
  timeout 150 python3 -m pytest -q -p no:cacheprovider --tb=line tests/test_engine.py 2>&1 | tail -3
  ;;
2)
  # llama.cpp builds in the background (for call 3) while the quantized kernels' GPU tests
  # run (every variant compiles: ~4.5 min on a fresh machine, longer beside the build).
  mkdir -p /tmp/lc && tar xJf .devkit/peers/llamacpp-src.tar.xz -C /tmp/lc
  (cd /tmp/lc/llama.cpp && cmake -B build -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
     -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_CURL=OFF -DLLAMA_BUILD_SERVER=OFF \
     >/tmp/lc/cmake.log 2>&1 && cmake --build build -j8 --target llama-bench llama-batched-bench \
     >/tmp/lc/build.log 2>&1; echo $? > /tmp/lc/built) &
  timeout 400 python3 -m pytest -q -p no:cacheprovider --tb=line tests/test_quant_kernels.py 2>&1 | tail -4
  for t in test_attention_kernels test_attention_backends test_server_lifecycle; do
    timeout 100 python3 -m pytest -q -p no:cacheprovider --tb=line tests/$t.py 2>&1 | tail -3
  done
  wait
  echo "llama.cpp build rc $(cat /tmp/lc/built)"
  ;;
3)
  # Three engines on the final code, bf16 and Q4_0, 64 x 512/128 (mlx-lm's 4-bit batch takes
  # ~75 s), with step traces to see whether prefill steps now overlap.
  B="vexel bench --random llama3-8b -n 64 --prompt-len 512 --output-len 128 --kv-cache-memory 16GiB --compare mlx-lm"
  timeout 170 $B --dtype bf16 --trace-steps $OUT/steps-bf16.jsonl --json-out $OUT/bf16.json 2>&1 | grep -E "tok/s|TTFT|ITL|x$|rror"
  timeout 110 bash .devkit/peers/llamacpp.sh /tmp/vx/random-llama3-8b-bf16.gguf > $OUT/llamacpp-bf16.log 2>&1; grep -E "pp512|tg128|  64 " $OUT/llamacpp-bf16.log
  timeout 200 $B --dtype q4_0 --json-out $OUT/q4_0.json 2>&1 | grep -E "tok/s|TTFT|ITL|x$|rror"
  timeout 100 bash .devkit/peers/llamacpp.sh /tmp/vx/random-llama3-8b-q4_0.gguf > $OUT/llamacpp-q4_0.log 2>&1; grep -E "pp512|tg128|  64 " $OUT/llamacpp-q4_0.log
  ;;
esac
