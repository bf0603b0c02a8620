: "${OUT:?}"
timeout 200 python3 benchmarks/decode_attention.py --batches 1 4 16 --contexts 128 256 512 1024 4096 --json $OUT/decode.json > $OUT/decode.txt 2>&1
echo "decode_attention rc $?"; cut -c1-75 $OUT/decode.txt
