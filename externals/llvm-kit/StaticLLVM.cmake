# Link the kit's static LLVM component libraries instead of its libLLVM.so.
#
# The kit is built with LLVM_LINK_LLVM_DYLIB, so MLIR's imported targets (and
# llvm_add_library) name the shared `LLVM` target. Two LLVMs in one process (ours and
# torch-mlir's) clash through process-wide unique symbols (DESIGN.md), so Dyno links LLVM
# statically and hides it with -Wl,--exclude-libs,ALL. This turns the imported `LLVM`
# target into the static component archives, whoever links it.
function(dyno_use_static_llvm)
  set(components)
  foreach(lib ${LLVM_AVAILABLE_LIBS})
    if(lib MATCHES "^LLVM[A-Z]" AND TARGET ${lib})
      get_target_property(kind ${lib} TYPE)
      if(kind STREQUAL "STATIC_LIBRARY")
        list(APPEND components ${lib})
      endif()
    endif()
  endforeach()
  # A SHARED IMPORTED target needs a file; an archive is harmless on the link line.
  get_target_property(support LLVMSupport IMPORTED_LOCATION_RELEASE)
  set_target_properties(LLVM PROPERTIES
    IMPORTED_LOCATION_RELEASE "${support}"
    IMPORTED_LOCATION "${support}"
    IMPORTED_SONAME_RELEASE ""
    IMPORTED_NO_SONAME ON
    INTERFACE_LINK_LIBRARIES "${components}")
  set(LLVM_LINK_LLVM_DYLIB OFF PARENT_SCOPE)
endfunction()
