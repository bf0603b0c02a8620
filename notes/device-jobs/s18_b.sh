# Session 18, call B: gemv_int8's normed mode (the residual add and RMS norm inside the qkv and
# gate/up products): its GPU tests, then one Q4_0 request with it and without it
# (`ab.py --separate-norm`: add_rms_norm's own launches, as before) in alternated rounds, both
# arms with MLX's CUDA graphs of up to 400 nodes (call A's best arm).
#   source .devkit/setup.sh && bash notes/device-jobs/s18_b.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
timeout 200 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemv_normed.py -x \
  > $OUT/tests-normed.txt 2>&1
echo "== normed GPU tests rc $? after $(( $(date +%s) - t0 )) s"; tail -4 $OUT/tests-normed.txt
export MLX_MAX_OPS_PER_BUFFER=400 MLX_MAX_MB_PER_BUFFER=100000
bash notes/device-jobs/arms_rounds.sh 3 "vexel" "python3 benchmarks/ab.py --separate-norm"
echo "== done after $(( $(date +%s) - t0 )) s"
