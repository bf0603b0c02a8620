# Session 51, call J: call I with two more arms: the product CTAs begin staging 2 or 4 us after
# their start, so that the attention's first round trips run alone. Contexts and carry as
# call H.
#   source .devkit/setup.sh && bash notes/device-jobs/s51_j.sh > $OUT/log.txt 2>&1
: "${OUT:?set OUT to the output folder}"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
timeout 300 python3 benchmarks/staged_attention.py --rounds 2 --contexts 128,256 \
  > $OUT/staged_attention.txt 2>&1
echo "== staged_attention rc $?"; grep -v Warn $OUT/staged_attention.txt | tail -24
