# Session 51, call K: benchmarks/staged_attention.py with the staging paced (a CTA's rounds of
# copies 250 or 500 ns apart, so that the attention's loads queue behind less of it), beside the
# engine's two launches, the unpaced staging and the rows copied after the wait. 128 and 256
# tokens. Carry [".devkit/wheels", ".devkit/setup.sh"] after `tree_slim.sh out`.
#   source .devkit/setup.sh && bash notes/device-jobs/s51_k.sh > $OUT/log.txt 2>&1
: "${OUT:?set OUT to the output folder}"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
timeout 200 python3 benchmarks/staged_attention.py --rounds 2 --contexts 128,256 \
  --arms 0,1,2,6,7 > $OUT/staged_attention.txt 2>&1
echo "== staged_attention rc $?"; grep -v Warn $OUT/staged_attention.txt | tail -24
