# The driver of bench/instructions.sh, included by bench/CMakeLists.txt and,
# by the script, by a baseline revision's (which lacks it).
find_path(AIADMIT_VALGRIND_INCLUDE_DIR valgrind/callgrind.h)
if(AIADMIT_VALGRIND_INCLUDE_DIR)
  add_executable(review_instructions ${CMAKE_CURRENT_LIST_DIR}/review_instructions.cpp)
  target_include_directories(review_instructions PRIVATE ${AIADMIT_VALGRIND_INCLUDE_DIR})
  target_link_libraries(review_instructions PRIVATE aiadmit_bench_inputs)
endif()
