# Session 29, call F, right after call E on the same machine: call C's llama.cpp build was
# still compiling (62%) under calls D and E, so their benches ran on a loaded host. Stop it,
# then the one-request bench beside mlx-lm on an idle host. llama.cpp is not run this session.
# Carry [".devkit/wheels", ".devkit/setup.sh"].
#   source .devkit/setup.sh && bash notes/device-jobs/s29_f.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
pkill -f "cmake --build"; pkill -f llamacpp.sh; pkill -x make; pkill -f nvcc; pkill -f cicc; sleep 3
echo "busy processes left: $(pgrep -c -f 'nvcc|cicc|ptxas|cmake')"
B="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 256 --kv-cache-memory 16GiB"
timeout 240 vexel $B --compare mlx-lm --json-out $OUT/bs1.json --trace-steps $OUT/steps-bs1.jsonl \
  > $OUT/bs1.txt 2>&1
echo "bs1 (rc $?, $(( $(date +%s) - t0 )) s):"; grep -E "tok/s|ITL|TTFT|rror" $OUT/bs1.txt | sed 's/│//g' | tr -s ' '
[ -s $OUT/steps-bs1.jsonl ] && python3 benchmarks/step_summary.py $OUT/steps-bs1.jsonl
gzip $OUT/steps-bs1.jsonl
