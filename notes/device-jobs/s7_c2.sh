# Session 7, call C2 (warm after C1): one request on Q4_0 beside mlx-lm, then the float kernel
# (A/B: benchmarks/ab.py --float-one-row); then 64 x 512/128 on Q4_0 with MLX's CUDA graphs
# committed every 1,000 operations and 100 GB of inputs instead of 100 and 1 GB (a bf16 64-row
# decode step spends ~6 ms inside mx.async_eval against ~2.7 for one Q4_0 request).
export VEXEL_CACHE=/tmp/vx
B="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 256 --kv-cache-memory 16GiB"
timeout 150 vexel $B --compare mlx-lm --json-out $OUT/bs1.json --trace-steps $OUT/steps-bs1.jsonl 2>&1 | grep -E "tok/s|ITL|x$|rror"
timeout 60 python3 benchmarks/ab.py --float-one-row $B --json-out $OUT/bs1-float.json 2>&1 | grep -E "generated tok/s|ITL|rror"
timeout 60 vexel $B --json-out $OUT/bs1-again.json 2>&1 | grep -E "generated tok/s|ITL|rror"
M="bench --random llama3-8b --dtype q4_0 -n 64 --prompt-len 512 --output-len 128 --kv-cache-memory 16GiB"
for round in 1 2; do
  timeout 60 vexel $M --trace-steps $OUT/steps-b64-default-$round.jsonl 2>&1 | grep -E "generated tok/s" | sed 's/^/default: /'
  MLX_MAX_OPS_PER_BUFFER=1000 MLX_MAX_MB_PER_BUFFER=100000 timeout 60 vexel $M --trace-steps $OUT/steps-b64-big-$round.jsonl 2>&1 | grep -E "generated tok/s" | sed 's/^/big graphs: /'
done
