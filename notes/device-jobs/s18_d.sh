# Session 18, call D: the normed mode with its own tiling (NORMED_TILING, 8/2/4/264: fewer CTAs
# reading x, delta and the norm's weight) and a thread's first block held in registers, after
# call C's timeline showed the first version's normed products at 19.7 us (qkv; plain 8.2) and
# 34.4 (gate/up; plain 20.2). MLX's whole-step graphs are now Vexel's default on CUDA
# (gpu.prefer_whole_step_graphs), so neither arm sets them. GPU tests (a subset), two
# alternated rounds, the normed arm's timeline, then one request beside mlx-lm.
#   source .devkit/setup.sh && bash notes/device-jobs/s18_d.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
python3 -c "import os, vexel_core.gpu; print('graph settings:', os.environ.get('MLX_MAX_OPS_PER_BUFFER'), os.environ.get('MLX_MAX_MB_PER_BUFFER'))"
timeout 100 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemv_normed.py \
  -k "two_launches or decode_with or (Q4_0 and bfloat16-plain) or (Q6_K and silu)" \
  > $OUT/tests-normed.txt 2>&1
echo "== normed GPU tests rc $? after $(( $(date +%s) - t0 )) s"; tail -5 $OUT/tests-normed.txt
bash notes/device-jobs/arms_rounds.sh 2 "vexel" "python3 benchmarks/ab.py --separate-norm"
W="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 128 --cache-dir /tmp/vx"
timeout 90 python3 benchmarks/gpu_timeline.py --top 10 -- $W > $OUT/timeline-normed.txt 2>&1
echo "== normed timeline rc $? after $(( $(date +%s) - t0 )) s"; tail -11 $OUT/timeline-normed.txt | cut -c1-150
timeout 100 vexel bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 256 \
  --compare mlx-lm --cache-dir /tmp/vx --json-out $OUT/compare.json > $OUT/compare.txt 2>&1
echo "== compare rc $? after $(( $(date +%s) - t0 )) s"; grep -E "generated tok/s|ITL|x$" $OUT/compare.txt
