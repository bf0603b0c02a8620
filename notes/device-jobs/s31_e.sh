# Planned for session 31 (written in session 30), call E, main: is the step's page fault still
# there? Session 20 made the step's host data one array (runner.step_arrays), whose first
# reader on the GPU pays a page fault (~100 us a step then: 4% of today's 2.39 ms step); since
# session 24 that reader is layer 0's paged decode (the rope moved into it). The paged decode's
# last 96 launches in order (three steps of 32 layers): if every 32nd is ~100 us longer, the
# fault stands, and a step whose decode state stays on the device (positions and lengths
# advanced by the graph, the table re-sent only when a block is added, the slot computed from
# it in the kernel) would save it; if not, nothing to build.
# Carry [".devkit/wheels", ".devkit/setup.sh"].
#   source .devkit/setup.sh && bash notes/device-jobs/s31_e.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/vx
t0=$(date +%s)
timeout 300 python3 benchmarks/gpu_timeline.py --bin-ms 50 --top 12 --where paged_decode \
  --last 96 -- bench --random llama3-8b --dtype q4_0 -n 1 \
  --prompt-len 128 --output-len 128 --kv-cache-memory 16GiB > $OUT/timeline.txt 2>&1
echo "== gpu_timeline rc $? after $(( $(date +%s) - t0 )) s"
grep -v -i warn $OUT/timeline.txt | tail -30
