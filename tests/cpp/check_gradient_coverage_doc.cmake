# Runs the whole C++ suite in one process to generate the gradient coverage table and
# compares it with the committed docs/gradient_coverage.md.
execute_process(COMMAND ${CMAKE_COMMAND} -E env EF_GRADIENT_COVERAGE_OUT=${GENERATED} ${TESTS} --gtest_brief=1
                RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE output)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "the test suite failed while generating the coverage table:\n${output}")
endif()
file(READ ${GENERATED} generated)
file(READ ${COMMITTED} committed)
if(NOT generated STREQUAL committed)
  message(FATAL_ERROR "docs/gradient_coverage.md is out of date: run `make docs` and commit it "
                      "(freshly generated: ${GENERATED})")
endif()
