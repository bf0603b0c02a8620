# Session 51, call G: benchmarks/staged_attention.py (the engine's paged decode and the output
# product + AddNorm in one launch, the output rows staged while the attention runs, against
# the engine's two launches), then the attention kernels' GPU tests (the paged decode now takes
# its CTA index and count as parameters). Carry [".devkit/wheels", ".devkit/setup.sh"] after
# `tree_slim.sh out`.
#   source .devkit/setup.sh && bash notes/device-jobs/s51_g.sh > $OUT/log.txt 2>&1
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
timeout 240 python3 benchmarks/staged_attention.py --rounds 2 > $OUT/staged_attention.txt 2>&1
echo "== staged_attention rc $?"; grep -v Warn $OUT/staged_attention.txt | tail -24
bash notes/device-jobs/gpu_tests.sh "240 tests/test_attention_kernels.py -m gpu" \
  "150 tests/test_compiled_decode.py"
