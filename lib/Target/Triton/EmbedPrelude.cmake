# Writes TritonPrelude.py (INPUT), without its module docstring, as the C++ raw string
# `kPrelude` (OUTPUT). Run by lib/Target/Triton/CMakeLists.txt at build time.
file(READ "${INPUT}" text)
string(FIND "${text}" "\"\"\"" opening)
if(NOT opening EQUAL 0)
  message(FATAL_ERROR "${INPUT} must start with its module docstring")
endif()
string(SUBSTRING "${text}" 3 -1 rest)
string(FIND "${rest}" "\"\"\"\n" closing)
if(closing EQUAL -1)
  message(FATAL_ERROR "${INPUT}: its module docstring has no closing line")
endif()
math(EXPR code_start "${closing} + 4")
string(SUBSTRING "${rest}" ${code_start} -1 code)
string(FIND "${code}" ")PY\"" delimiter)
if(NOT delimiter EQUAL -1)
  message(FATAL_ERROR "${INPUT} contains the raw string's delimiter )PY\"")
endif()
file(WRITE "${OUTPUT}.tmp"
  "// Generated from TritonPrelude.py by EmbedPrelude.cmake: do not edit.\n"
  "constexpr llvm::StringLiteral kPrelude = R\"PY(${code})PY\";\n")
configure_file("${OUTPUT}.tmp" "${OUTPUT}" COPYONLY)  # (rewritten only if different)
file(REMOVE "${OUTPUT}.tmp")
