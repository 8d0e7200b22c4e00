# Warning flags for every target of ours. -Werror when INFERENG_WERROR (on when CI=true).
function(infereng_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wnon-virtual-dtor -Wno-unused-parameter)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(${target} PRIVATE -Wshadow=local)  # clang has no =local form
    # GCC 12 gives false positives inside libstdc++/Boost headers at -O2/-O3.
    target_compile_options(${target} PRIVATE -Wno-maybe-uninitialized -Wno-restrict
      -Wno-array-bounds -Wno-stringop-overflow)
  endif()
  if(INFERENG_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
