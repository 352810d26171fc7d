# The multi-GPU sum (multi_gpu/), included from tests/CMakeLists.txt; nothing when NCCL
# was not found (multi_gpu/CMakeLists.txt says so while configuring).
if(NOT TARGET multi_gpu_sum)
  return()
endif()
# Every method on one GPU (NCCL with a single rank) at awkward sizes, and the fixed-order
# combine's bits run to run (GPU).
add_gpu_test(gpu_multi_gpu_tests SOURCES gpu/test_multi_gpu.cpp LIBS multi_gpu_core)
# Its refusals: exit 2 and one sentence before a GPU is looked for, exit 3 for missing GPUs.
add_test(NAME multi_gpu_cli COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/host/test_multi_gpu_cli.py
                                    $<TARGET_FILE:multi_gpu_sum>)
set_tests_properties(multi_gpu_cli PROPERTIES LABELS host)
