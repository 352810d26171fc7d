# The multi-GPU sum (multi_gpu/), included from tests/CMakeLists.txt. multi_gpu_mpi's
# tests are registered whatever was found and skip (exit 77) where the program was not
# built (it needs NCCL and MPI; multi_gpu/CMakeLists.txt says which was missing): the
# command line under mpiexec -np 2 (host), and its runs with 1, 2 and 4 ranks against
# multi_gpu_sum's bits (GPU).
if(TARGET multi_gpu_mpi)
  set(_mpi_program $<TARGET_FILE:multi_gpu_mpi>)
  set(_mpiexec ${MPIEXEC_EXECUTABLE})
  set(_sum_program $<TARGET_FILE:multi_gpu_sum>)
else()
  set(_mpi_program -)
  set(_mpiexec -)
  set(_sum_program -)
endif()
add_test(NAME multi_gpu_mpi_cli COMMAND ${CMAKE_COMMAND} -E env MULTI_GPU_MPI=${_mpi_program} MPIEXEC=${_mpiexec}
                                        ${REDUCTION_PYTEST} ${CMAKE_CURRENT_SOURCE_DIR}/host/test_multi_gpu_mpi_cli.py)
set_tests_properties(multi_gpu_mpi_cli PROPERTIES LABELS host SKIP_RETURN_CODE 77 TIMEOUT 600)
add_test(NAME gpu_multi_gpu_mpi COMMAND ${CMAKE_COMMAND} -E env MPIEXEC=${_mpiexec} MULTI_GPU_MPI=${_mpi_program}
                                        MULTI_GPU_SUM=${_sum_program}
                                        ${REDUCTION_PYTEST} ${CMAKE_CURRENT_SOURCE_DIR}/gpu/test_multi_gpu_mpi.py)
set_tests_properties(gpu_multi_gpu_mpi PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 TIMEOUT 600)

# Nothing more when NCCL was not found (multi_gpu/CMakeLists.txt says so while configuring).
if(NOT TARGET multi_gpu_sum)
  return()
endif()
# Every method on one GPU (NCCL with a single rank) at awkward sizes, the fixed-order
# combine's bits run to run, the peer-store combine and its exchange launch after launch
# (on every GPU present, and with ranks as streams of one GPU), and a one-rank
# RankGpu against the one-process team (GPU).
add_gpu_test(gpu_multi_gpu_tests SOURCES gpu/test_multi_gpu.cpp LIBS multi_gpu_core)
set_tests_properties(gpu_multi_gpu_tests PROPERTIES TIMEOUT 600)
# Its refusals: exit 2 and one sentence before a GPU is looked for, exit 3 for missing GPUs.
add_test(NAME multi_gpu_cli COMMAND ${CMAKE_COMMAND} -E env MULTI_GPU_SUM=$<TARGET_FILE:multi_gpu_sum>
                                    ${REDUCTION_PYTEST} ${CMAKE_CURRENT_SOURCE_DIR}/host/test_multi_gpu_cli.py)
set_tests_properties(multi_gpu_cli PROPERTIES LABELS host)
