# Session 4, call A: where the GPU's time goes (Nsight Systems), bf16 64 x 512/128 and q4_0 bs=1.
export VEXEL_CACHE=/tmp/vx
which nsys || ls /usr/local/cuda*/bin | grep -i nsys; nsys --version
T0=$(date +%s)
timeout 170 vexel bench --random llama3-8b --dtype bf16 -n 64 --prompt-len 512 --output-len 128 --json-out $OUT/bf16.json 2>&1 | grep -v "━"
echo "bf16 bench took $(( $(date +%s) - T0 )) s"
S="nsys profile --trace=cuda --cuda-graph-trace=node --sample=none --cpuctxsw=none -f true"
timeout 150 $S -o /tmp/p_bf16 vexel bench --random llama3-8b --dtype bf16 -n 64 --prompt-len 512 --output-len 128 --json-out $OUT/bf16-nsys.json 2>&1 | grep -v "━" | tail -15
nsys export --type sqlite -f true -o /tmp/p_bf16.sqlite /tmp/p_bf16.nsys-rep > /dev/null 2>&1
python3 benchmarks/nsys_summary.py /tmp/p_bf16.sqlite --bin-ms 100 --top 30 > $OUT/nsys-bf16.txt 2>&1; head -50 $OUT/nsys-bf16.txt
timeout 150 $S -o /tmp/p_q4 vexel bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 256 --json-out $OUT/q4_0-bs1-nsys.json 2>&1 | grep -v "━" | tail -15
nsys export --type sqlite -f true -o /tmp/p_q4.sqlite /tmp/p_q4.nsys-rep > /dev/null 2>&1
python3 benchmarks/nsys_summary.py /tmp/p_q4.sqlite --bin-ms 100 --top 30 > $OUT/nsys-q4_0-bs1.txt 2>&1; head -50 $OUT/nsys-q4_0-bs1.txt
echo "total $(( $(date +%s) - T0 )) s"
