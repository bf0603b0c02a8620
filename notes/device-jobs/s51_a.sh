# Session 51, call A: benchmarks/staged_weights.py (the output product's weight rows staged in
# shared memory while a stand-in for the paged decode spins, in one launch; against the two
# launches). Carry [".devkit/wheels", ".devkit/setup.sh"] after `tree_slim.sh out`.
#   source .devkit/setup.sh && bash notes/device-jobs/s51_a.sh > $OUT/log.txt 2>&1
: "${OUT:?set OUT to the output folder}"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
timeout 400 python3 benchmarks/staged_weights.py --rounds 2 --spin 10,6 > $OUT/staged.txt 2>&1
echo "== staged_weights rc $?"; cat $OUT/staged.txt | tail -40
