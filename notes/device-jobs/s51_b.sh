# Session 51, call B: benchmarks/staged_weights.py after call A: the probe's timers cut into
# parts, x rounded by two threads a block, the AddNorm epilogue, the q/k/v shape. Carry
# [".devkit/wheels", ".devkit/setup.sh"] after `tree_slim.sh out`.
#   source .devkit/setup.sh && bash notes/device-jobs/s51_b.sh > $OUT/log.txt 2>&1
: "${OUT:?set OUT to the output folder}"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
timeout 420 python3 benchmarks/staged_weights.py --rounds 2 --spin 10 > $OUT/staged.txt 2>&1
echo "== staged_weights rc $?"; grep -v Warn $OUT/staged.txt | tail -40
