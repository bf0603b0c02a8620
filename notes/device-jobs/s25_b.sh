# Planned for session 25 (written in session 24), call B, branch next/merge-in-kernel (main
# merged in): the paged decode merging its spans inside the kernel on CUDA lets one request
# split even short contexts (spans of 128 tokens from 256: `MERGED_MIN_SPAN`), where session
# 19 timed two spans with the write faster than one (256 tokens: 12.2-13.9 against 16.4 us a
# layer; four at 512: 13.4-15.5 against 21.9) but a merge launch ate the gain. First the
# kernel alone by launch shape (one and four requests, 128-1,024 tokens, the write on, pools
# of a served model's size), then the step alternated in one process against
# `ab.py --long-spans` (main's split: one span up to 512 tokens). Merge if the step is
# shorter and s25_c.sh's GPU tests pass.
#   source .devkit/setup.sh && bash notes/device-jobs/s25_b.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
timeout 240 python3 benchmarks/decode_attention.py --write --batches 1 4 \
  --contexts 128 256 384 512 1024 --pool-mb 256 --json $OUT/decode_attention.json \
  > $OUT/decode_attention.txt 2>&1
echo "== decode_attention rc $? after $(( $(date +%s) - t0 )) s"; tail -40 $OUT/decode_attention.txt
timeout 180 python3 benchmarks/alternate.py --rounds 8 --tokens 256 --long-spans \
  > $OUT/alternate.txt 2>&1
echo "== alternate rc $? after $(( $(date +%s) - t0 )) s"; tail -10 $OUT/alternate.txt
