# Session 50, call 5: the three tests call 4 failed on the H200 (two-row products on
# gemv_int8, judged on x unrounded), after the fix, each with several fresh seeds (-count by
# repeating the files' run), and the two modules whole.
# Carry [".devkit/wheels", ".devkit/setup.sh"] after `tree_slim.sh out`.
#   source .devkit/setup.sh && bash notes/device-jobs/s50_5.sh
: "${OUT:?set OUT to the output folder}"
for i in 1 2 3 4 5; do
  bash notes/device-jobs/gpu_tests.sh "60 tests/test_linear.py -k composes_inside" \
    "60 tests/test_quant_formats.py -k slice_of_rows"
done
bash notes/device-jobs/gpu_tests.sh "150 tests/test_linear.py" "150 tests/test_quant_formats.py"
