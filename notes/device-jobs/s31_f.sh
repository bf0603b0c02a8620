# Planned for session 31 (written in session 30), call F, on branch next/device-step: a decode
# step's array (positions, slots, lengths, tables) made on the device as the last one plus one
# where every sequence stays within its blocks (runner.StepArrayMaker), instead of on the host,
# whose array costs its first GPU reader a page fault (~100 us a step in session 20). CPU
# tests: the same tokens and log-probs bit for bit. Here: the engine alternated against every
# array made on the host (ab.py --host-step-arrays), then the paged decode's launches in order
# (is layer 0's still ~100 us longer, one step in 16 now?).
# Carry [".devkit/wheels", ".devkit/setup.sh"].
#   git checkout next/device-step && source .devkit/setup.sh && bash notes/device-jobs/s31_f.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/vx
t0=$(date +%s)
timeout 240 python3 benchmarks/alternate.py --rounds 8 --tokens 256 --host-step-arrays \
  > $OUT/alternate.txt 2>&1
echo "== alternate rc $? after $(( $(date +%s) - t0 )) s"; tail -3 $OUT/alternate.txt
timeout 200 python3 benchmarks/gpu_timeline.py --bin-ms 50 --top 8 --where paged_decode \
  --last 96 -- bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 128 \
  --kv-cache-memory 16GiB > $OUT/timeline.txt 2>&1
echo "== gpu_timeline rc $? after $(( $(date +%s) - t0 )) s"
grep -A6 "'paged_decode'" $OUT/timeline.txt | grep -v -i warn
