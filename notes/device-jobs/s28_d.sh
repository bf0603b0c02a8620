# Session 28, call D: Nsight Compute on the paged decode after call C's prologue change as one request's step launches it
# (benchmarks/attention_ncu.py: packed heads, rotation, the write; 256 MB pools), at 128 and
# 384 tokens of context: where do its 12-18 us go, when its bytes take well under one? Warp
# stalls by SASS line, for the restructure's choice.
# Carry [".devkit/wheels", ".devkit/setup.sh"].
#   source .devkit/setup.sh && bash notes/device-jobs/s28_b.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
# 12 launches a context: skip 8 of the first context's, or the first's 12 and 8 of the second's
for arm in c128:8; do
  IFS=: read -r name skip <<< "$arm"
  timeout 200 ncu --clock-control none --set full --import-source no -k regex:vx_paged_decode \
    --launch-skip $skip -c 2 -f -o /tmp/$name \
    python3 benchmarks/attention_ncu.py --contexts 128 384 > /tmp/$name.log 2>&1
  echo "== $name: ncu rc $? after $(( $(date +%s) - t0 )) s"; grep -E "context|rror" /tmp/$name.log | cut -c1-200
  ncu -i /tmp/$name.ncu-rep --page details --print-details all > $OUT/$name-details.txt 2>&1
  ncu -i /tmp/$name.ncu-rep --page source --csv --print-source sass > $OUT/$name-sass.csv 2>&1
  grep -E "Duration|Registers Per|Achieved Occupancy|Warp Cycles Per Issued|Grid Size|Block Size" \
    $OUT/$name-details.txt | head -14
done
gzip $OUT/*-sass.csv
