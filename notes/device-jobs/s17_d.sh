# Session 17, call D (the last ~440 s): one Q4_0 request on main with Q4_0 now packed on CUDA
# (BlockWeight), beside mlx-lm in the same run; then the same random model's greedy tokens by
# the kernels (packed) and by MLX's affine path, as a smoke check of the packed weights at
# Llama-3-8B's shapes. Carry [".devkit/wheels", ".devkit/setup.sh"]:
#   source .devkit/setup.sh && bash notes/device-jobs/s17_d.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/vx
t0=$(date +%s)
timeout 250 vexel bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 256 \
  --compare mlx-lm --cache-dir /tmp/vx --json-out $OUT/bench.json > $OUT/bench.txt 2>&1
echo "== bench rc $? after $(( $(date +%s) - t0 )) s"; tail -25 $OUT/bench.txt
f=$(ls /tmp/vx/*.gguf | head -1); echo "model: $f"
for path in kernel affine; do
  VEXEL_ENGINE__QUANT_PATH=$path timeout 60 vexel generate -m "$f" --temperature 0 -n 16 \
    --ignore-eos --json "The quick brown fox" > $OUT/generate-$path.json 2>&1
  echo "== generate ($path) rc $? after $(( $(date +%s) - t0 )) s"
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d.get('token_ids') or d.get('tokens') or list(d))" $OUT/generate-$path.json 2>&1 | tail -2
done
