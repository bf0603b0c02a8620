# Session 18, call A: the device repack's GPU tests (BlockWeight packs Q4_0 with MLX operations
# on the GPU since session 17's last call), then MLX's CUDA-graph settings for one request, never
# measured at one row: graphs on (default: a graph of <= 100 nodes on an H200, updated and
# replayed), graphs off (each kernel launched directly), and graphs of up to 400 nodes.
#   source .devkit/setup.sh && bash notes/device-jobs/s18_a.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
timeout 150 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_quant_kernels.py \
  -k "packed or packs" > $OUT/tests.txt 2>&1
echo "== packed GPU tests rc $? after $(( $(date +%s) - t0 )) s"; tail -4 $OUT/tests.txt
bash notes/device-jobs/arms_rounds.sh 3 "vexel" "env MLX_USE_CUDA_GRAPHS=0 vexel" \
  "env MLX_MAX_OPS_PER_BUFFER=400 MLX_MAX_MB_PER_BUFFER=100000 vexel"
echo "== done after $(( $(date +%s) - t0 )) s"
