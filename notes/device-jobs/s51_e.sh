# Session 51, call E: benchmarks/staged_prefix.py with the staged rows summed while the
# stream's loads fly (interleaved). Carry [".devkit/wheels", ".devkit/setup.sh"] after
# `tree_slim.sh out`.
#   source .devkit/setup.sh && bash notes/device-jobs/s51_e.sh > $OUT/log.txt 2>&1
: "${OUT:?set OUT to the output folder}"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
timeout 300 python3 benchmarks/staged_prefix.py --rounds 2 > $OUT/prefix.txt 2>&1
echo "== prefix rc $?"; grep -v Warn $OUT/prefix.txt | tail -20
