# Session 51, call C: benchmarks/staged_weights.py with the stream arms (a stand-in for the
# feed-forward's down phase and grid count before the q/k/v product), both shapes, and call
# B's arms again. Carry [".devkit/wheels", ".devkit/setup.sh"] after `tree_slim.sh out`.
#   source .devkit/setup.sh && bash notes/device-jobs/s51_c.sh > $OUT/log.txt 2>&1
: "${OUT:?set OUT to the output folder}"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
timeout 300 python3 benchmarks/staged_weights.py --rounds 2 --spin 10 --arms stream \
  > $OUT/stream.txt 2>&1
echo "== stream rc $?"; grep -v Warn $OUT/stream.txt | tail -30
timeout 200 python3 benchmarks/staged_weights.py --rounds 1 --spin 10 --arms spin,norm \
  > $OUT/spin.txt 2>&1
echo "== spin rc $?"; grep -v Warn $OUT/spin.txt | tail -30
