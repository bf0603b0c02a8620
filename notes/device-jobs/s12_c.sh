# Session 12, call C (~430 s): branch next/gated-gate-up against main's path (ab.py
# --unfused-glu), one Q4_0 Llama-3-8B request (128 + 512 tokens), after one warm-up run of
# each (call B's first run, fused, spent its 55 s compiling on the fresh machine), in three
# alternated rounds F U, U F, F U. Carry [".devkit/wheels", ".devkit/setup.sh", "wt"] with
# the branch's files in wt/gated.
#   source .devkit/setup.sh && bash notes/device-jobs/s12_c.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
source notes/device-jobs/branch_tree.sh
tree gated
cd /tmp/gated && mkdir -p /tmp/ab
B="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --kv-cache-memory 16GiB"
run() {  # NAME LIMIT OUTPUT_LEN
  case $1 in
    fused*) cmd="vexel" ;;
    unfused*) cmd="python3 benchmarks/ab.py --unfused-glu" ;;
  esac
  echo "== $1" >> $OUT/bench.txt
  timeout $2 $cmd $B --output-len $3 --trace-steps /tmp/ab/steps-$1.jsonl > /tmp/ab/$1.txt 2>&1
  local rc=$?
  cat /tmp/ab/$1.txt >> $OUT/bench.txt
  echo "$1 (rc $rc, $(( $(date +%s) - t0 )) s):" \
    $(grep -E "generated tok/s|ITL p50" /tmp/ab/$1.txt | sed 's/│//g' | tr -s ' ')
  [ -s /tmp/ab/steps-$1.jsonl ] && echo "  $(python3 benchmarks/step_summary.py /tmp/ab/steps-$1.jsonl | sed -n '$p')"
}
run fused-warm 150 32
run unfused-warm 90 32
for name in fused-1 unfused-1 unfused-2 fused-2 fused-3 unfused-3; do run $name 60 512; done
tar -czf $OUT/steps.tar.gz -C /tmp/ab $(cd /tmp/ab && ls steps-*.jsonl)
echo "all done after $(( $(date +%s) - t0 )) s"
