# Session 51, call I: call H's run again after two fixes to the probe: the last CTA normed the
# 4,096 values one at a time (~16 dependent loads a thread), and each row loaded its residual
# only after the wait. Arms, contexts and carry as call H.
#   source .devkit/setup.sh && bash notes/device-jobs/s51_i.sh > $OUT/log.txt 2>&1
: "${OUT:?set OUT to the output folder}"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
timeout 300 python3 benchmarks/staged_attention.py --rounds 2 --contexts 128,256 \
  > $OUT/staged_attention.txt 2>&1
echo "== staged_attention rc $?"; grep -v Warn $OUT/staged_attention.txt | tail -24
