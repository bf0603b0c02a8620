# Prepared in session 44 for session 45 (not run): the files most users hold, Q4_K_M (DTYPE,
# default q4_k_m; q5_k_m the other mix), beside llama.cpp on the same random file, as s44_e.sh
# did for Q4_K: llama.cpp builds at nice 19 while Vexel serves 16 and 8 requests of 512 + 128;
# then llama-bench tg128 and llama-batched-bench -npl 8,16; then Vexel's one request alone.
# In the 16 of 32 layers whose attn_v is Q6_K, q, k and v take three products instead of one
# (WeightTensor.stack needs one format). Carry [".devkit/wheels", ".devkit/setup.sh",
# ".devkit/peers"] after `tree_slim.sh out --model`.
#   source .devkit/setup.sh && DTYPE=q4_k_m bash notes/device-jobs/s45_mix.sh
: "${OUT:?set OUT to the output folder}"
DTYPE=${DTYPE:-q4_k_m}
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/vx
t0=$(date +%s)
(timeout 400 nice -n 19 bash .devkit/peers/llamacpp.sh > $OUT/llamacpp-build.log 2>&1; echo "build rc $?" >> $OUT/llamacpp-build.log) &
B="bench --random llama3-8b --dtype $DTYPE --kv-cache-memory 16GiB"
for n in 16 8; do
  timeout 150 vexel $B -n $n --prompt-len 512 --output-len 128 > $OUT/b$n.txt 2>&1
  echo "== $DTYPE, $n requests: rc $? after $(( $(date +%s) - t0 )) s:" \
    $(grep -E "generated tok/s|ITL|TTFT|peak memory|rror" $OUT/b$n.txt | sed 's/│//g' | tr -s ' ')
done
wait
echo "== build done after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/llamacpp-build.log)"
M=/tmp/vx/random-llama3-8b-$DTYPE.gguf
L=/tmp/lc/llama.cpp/build/bin
timeout 60 $L/llama-bench -m $M -p 512 -n 128 -ngl 99 -fa 1 -r 3 > $OUT/llamacpp-bench.log 2>&1
echo "== llama-bench rc $?"; grep -E "^\|" $OUT/llamacpp-bench.log
timeout 90 $L/llama-batched-bench -m $M -c 16384 -b 2048 -ub 512 -npp 512 -ntg 128 -npl 8,16 \
  -ngl 99 -fa on > $OUT/llamacpp-batched.log 2>&1
echo "== llama-batched-bench rc $? after $(( $(date +%s) - t0 )) s"; grep -E "^\|" $OUT/llamacpp-batched.log
timeout 100 vexel $B -n 1 --prompt-len 128 --output-len 256 > $OUT/b1.txt 2>&1
echo "== $DTYPE, one request: rc $? after $(( $(date +%s) - t0 )) s:" \
  $(grep -E "generated tok/s|ITL|rror" $OUT/b1.txt | sed 's/│//g' | tr -s ' ')
