# Session 19, call C: why the engine's paged decode takes 17.5-18.9 us a layer (call B's
# timelines) where benchmarks/decode_attention.py measured ~10-12 at the same shape: the
# benchmark without and with the cache write that a decode step's launch does first.
#   source .devkit/setup.sh && bash notes/device-jobs/s19_c.sh
: "${OUT:?set OUT to the output folder}"
t0=$(date +%s)
for arm in read write; do
  flag=$([ $arm = write ] && echo --write)
  timeout 150 python3 benchmarks/decode_attention.py --batches 1 4 --contexts 128 256 512 $flag \
    --json $OUT/decode-$arm.json > $OUT/decode-$arm.txt 2>&1
  echo "== $arm: rc $? after $(( $(date +%s) - t0 )) s"; grep -v -i warn $OUT/decode-$arm.txt | cut -c1-140
done
