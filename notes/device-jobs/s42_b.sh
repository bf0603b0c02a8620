# Prepared in session 41 for session 42 (not run): Vexel beside llama.cpp on a random Q4_K
# Llama-3-8B (`--dtype q4_k`: every matrix Q4_K, the bulk of what a Q4_K_M file holds). llama.cpp
# builds at nice 19 while Vexel runs one request (gemv_int8's Q4_K path) and 8 requests
# (gemm_blocks); then llama-bench tg128 and llama-batched-bench -npl 1,8,16 on the same file.
# Carry [".devkit/wheels", ".devkit/setup.sh", ".devkit/peers"] after `tree_slim.sh out --model`.
#   source .devkit/setup.sh && bash notes/device-jobs/s42_b.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/vx
t0=$(date +%s)
(timeout 450 nice -n 19 bash .devkit/peers/llamacpp.sh > $OUT/llamacpp-build.log 2>&1; echo "build rc $?" >> $OUT/llamacpp-build.log) &
B="bench --random llama3-8b --dtype q4_k --kv-cache-memory 16GiB"
timeout 150 vexel $B -n 1 --prompt-len 128 --output-len 256 > $OUT/b1.txt 2>&1
echo "== one request: rc $? after $(( $(date +%s) - t0 )) s:" \
  $(grep -E "generated tok/s|ITL|rror" $OUT/b1.txt | sed 's/│//g' | tr -s ' ')
timeout 80 vexel $B -n 8 --prompt-len 512 --output-len 128 > $OUT/b8.txt 2>&1
echo "== 8 requests: rc $? after $(( $(date +%s) - t0 )) s:" \
  $(grep -E "generated tok/s|ITL|peak memory|rror" $OUT/b8.txt | sed 's/│//g' | tr -s ' ')
wait
echo "== build done after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/llamacpp-build.log)"
M=/tmp/vx/random-llama3-8b-q4_k.gguf
L=/tmp/lc/llama.cpp/build/bin
timeout 60 $L/llama-bench -m $M -p 512 -n 128 -ngl 99 -fa 1 -r 3 > $OUT/llamacpp-bench.log 2>&1
echo "== llama-bench rc $?"; grep -E "^\|" $OUT/llamacpp-bench.log
timeout 90 $L/llama-batched-bench -m $M -c 16384 -b 2048 -ub 512 -npp 512 -ntg 128 -npl 1,8,16 \
  -ngl 99 -fa on > $OUT/llamacpp-batched.log 2>&1
echo "== llama-batched-bench rc $? after $(( $(date +%s) - t0 )) s"; grep -E "^\|" $OUT/llamacpp-batched.log
