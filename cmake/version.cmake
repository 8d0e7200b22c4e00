# Generates generated/infereng/version_info.h with the project version and git commit.
execute_process(COMMAND git rev-parse --short=12 HEAD
  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
  OUTPUT_VARIABLE INFERENG_GIT_COMMIT OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT INFERENG_GIT_COMMIT)
  set(INFERENG_GIT_COMMIT "unknown")
endif()
execute_process(COMMAND git status --porcelain --untracked-files=no
  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
  OUTPUT_VARIABLE _dirty OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(_dirty)
  set(INFERENG_GIT_DIRTY "true")
else()
  set(INFERENG_GIT_DIRTY "false")
endif()
configure_file(${PROJECT_SOURCE_DIR}/cmake/version_info.h.in
  ${PROJECT_BINARY_DIR}/generated/infereng/version_info.h @ONLY)
