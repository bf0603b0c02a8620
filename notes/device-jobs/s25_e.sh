# Session 25, call E: llama.cpp (built here, ~5.5 min) on the file call D's bench wrote, or a
# fresh one of the same shapes if the machine was given back between. Carry
# [".devkit/wheels", ".devkit/setup.sh", ".devkit/peers"] with notes/bench moved out.
#   source .devkit/setup.sh && bash notes/device-jobs/s25_e.sh
: "${OUT:?set OUT to the output folder}"
t0=$(date +%s)
M=/tmp/vx/random-llama3-8b-q4_0.gguf
[ -s $M ] || { mkdir -p /tmp/vx; python3 .devkit/peers/make_random_gguf_fast.py $M --qtype Q4_0; }
timeout 560 bash .devkit/peers/llamacpp.sh $M > $OUT/llamacpp-q4_0.log 2>&1
echo "llama.cpp rc $? after $(( $(date +%s) - t0 )) s"; grep -E "tg128|pp512|^\| +512 \| +128 \| +1 " $OUT/llamacpp-q4_0.log
