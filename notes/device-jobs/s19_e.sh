# Session 19, call E: is the engine's paged decode slower (18.9 us a layer at 129-256 tokens,
# 8 warps, against 15.4 in call D's benchmark with the write) because its pools are large?
# The benchmark's pools are 4 MB a layer; a served Llama-3-8B's with 16 GiB of cache 256 MB.
#   source .devkit/setup.sh && bash notes/device-jobs/s19_e.sh
: "${OUT:?set OUT to the output folder}"
t0=$(date +%s)
for mb in 0 256; do
  timeout 100 python3 benchmarks/decode_attention.py --batches 1 --contexts 128 256 512 --write \
    --pool-mb $mb --json $OUT/decode-$mb.json > $OUT/decode-$mb.txt 2>&1
  echo "== pools of ${mb} MB (0: 4 MB): rc $? after $(( $(date +%s) - t0 )) s"
  grep -v -i warn $OUT/decode-$mb.txt | cut -c1-140
done
