# An alternated A/B of one Q4_0 Llama-3-8B request (128 + 512 tokens), the way session 12 found
# the gated product's gain (call C): one warm-up run of each arm (a fresh machine compiles its
# kernels in the first runs), then three rounds A B, B A, A B, each run with its step trace.
# The host's speed moves between episodes by ~1.5x (session 12): compare within a round.
#   source .devkit/setup.sh && bash notes/device-jobs/ab_rounds.sh "vexel" \
#     "python3 benchmarks/ab.py --separate-cache-write"              (~300 s; $OUT: bench.txt,
#                                                                     steps.tar.gz)
# Prints, per run, generated tok/s, ITL and the step medians (build / submit / interval).
: "${OUT:?set OUT to the output folder}"
A=$1 B=$2
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
mkdir -p /tmp/ab
W="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --kv-cache-memory 16GiB"
run() {  # NAME COMMAND LIMIT OUTPUT_LEN
  echo "== $1: $2" >> $OUT/bench.txt
  timeout $3 $2 $W --output-len $4 --trace-steps /tmp/ab/steps-$1.jsonl > /tmp/ab/$1.txt 2>&1
  local rc=$?
  cat /tmp/ab/$1.txt >> $OUT/bench.txt
  echo "$1 (rc $rc, $(( $(date +%s) - t0 )) s):" \
    $(grep -E "generated tok/s|ITL p50" /tmp/ab/$1.txt | sed 's/│//g' | tr -s ' ')
  [ -s /tmp/ab/steps-$1.jsonl ] && echo "  $(python3 benchmarks/step_summary.py /tmp/ab/steps-$1.jsonl | sed -n '$p')"
}
run A-warm "$A" 150 32
run B-warm "$B" 90 32
for name in A-1 B-1 B-2 A-2 A-3 B-3; do
  case $name in A-*) cmd=$A ;; B-*) cmd=$B ;; esac
  run $name "$cmd" 60 512
done
tar -czf $OUT/steps.tar.gz -C /tmp/ab $(cd /tmp/ab && ls steps-*.jsonl)
echo "all done after $(( $(date +%s) - t0 )) s"
