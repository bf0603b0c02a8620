# Session 51, call D: benchmarks/staged_prefix.py (the gate/up product's first rows staged in
# shared memory during a spin, the rest streamed), then staged_weights.py's spin and norm arms
# once more on the shared header (staged_common.cuh). Carry [".devkit/wheels",
# ".devkit/setup.sh"] after `tree_slim.sh out`.
#   source .devkit/setup.sh && bash notes/device-jobs/s51_d.sh > $OUT/log.txt 2>&1
: "${OUT:?set OUT to the output folder}"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
timeout 240 python3 benchmarks/staged_prefix.py --rounds 2 > $OUT/prefix.txt 2>&1
echo "== prefix rc $?"; grep -v Warn $OUT/prefix.txt | tail -20
timeout 200 python3 benchmarks/staged_weights.py --rounds 1 --spin 10 --arms spin,norm \
  --shapes "output 4096x4096" > $OUT/spin.txt 2>&1
echo "== spin rc $?"; grep -v Warn $OUT/spin.txt | tail -20
