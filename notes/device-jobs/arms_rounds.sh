# Alternated rounds of one Q4_0 Llama-3-8B request (128 + 256 tokens) over any number of arms,
# each arm a command that stands where `vexel` would (env settings allowed):
#   source .devkit/setup.sh && bash notes/device-jobs/arms_rounds.sh ROUNDS "vexel" \
#     "env MLX_USE_CUDA_GRAPHS=0 vexel" ...
# One short warm-up run per arm (a fresh machine compiles its kernels there), then ROUNDS
# rounds, the arms' order rotated each round so that no arm always follows another. Each run
# keeps its step trace; $OUT gets bench.txt and steps.tar.gz. Judge by the median over rounds
# of each run's median step: the host's speed moves by up to 1.5x between episodes.
: "${OUT:?set OUT to the output folder}"
rounds=$1; shift
arms=("$@")
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
mkdir -p /tmp/ab /tmp/vx
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
for i in "${!arms[@]}"; do run "$i-warm" "${arms[$i]}" 150 32; done
n=${#arms[@]}
for r in $(seq 1 "$rounds"); do
  for k in $(seq 0 $((n - 1))); do
    i=$(( (k + r) % n ))
    run "$i-$r" "${arms[$i]}" 60 256
  done
done
tar -czf $OUT/steps.tar.gz -C /tmp/ab $(cd /tmp/ab && ls steps-*.jsonl)
echo "all done after $(( $(date +%s) - t0 )) s"
