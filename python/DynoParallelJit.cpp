//===- DynoParallelJit.cpp - JIT compiles that run at once ------*- C++ -*-===//
//
// Loaded as dyno._mlir_libs._dynoParallelJit: JIT-compiles several LLVM-dialect modules
// (parts of one graph's kernels, no symbol defined in two of them) at once, one thread
// each, with Python's GIL released. Upstream's ExecutionEngine binding holds the GIL while
// LLVM optimizes and generates code, so Python threads cannot overlap that work.
//
// Only MLIR's C API is used: the C++ API is private to the common CAPI library (which
// keeps its statically linked LLVM hidden from torch-mlir's).
//
//===----------------------------------------------------------------------===//
#include "mlir-c/Bindings/Python/Interop.h"
#include "mlir-c/ExecutionEngine.h"
#include "mlir-c/IR.h"
#include "mlir-c/RegisterEverything.h"
#include "mlir/Bindings/Python/Nanobind.h"
#include "mlir/Bindings/Python/NanobindAdaptors.h"

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <stdexcept>
#include <system_error>
#include <thread>

namespace nb = nanobind;

namespace {

/// ExecutionEngines for `modules`, each compiled whole (looking up its symbol `entries[i]`
/// has ORC compile the module, one unit) before this returns, all at once.
std::vector<nb::object> compileAtOnce(const std::vector<MlirModule> &modules,
                                      const std::vector<std::string> &entries,
                                      int optLevel,
                                      const std::vector<std::string> &sharedLibs,
                                      bool enablePic) {
  if (modules.size() != entries.size())
    throw std::invalid_argument("one entry symbol per module is needed");
  std::vector<MlirStringRef> libraries;
  for (const std::string &path : sharedLibs)
    libraries.push_back(mlirStringRefCreate(path.data(), path.size()));
  // Each engine registers the LLVM IR translations in its module's context, which would
  // change a registry other threads read; registered here first, on this thread, they
  // are found there and nothing changes. Contexts uniquing from several threads must
  // lock: multithreading on.
  for (MlirModule module : modules) {
    MlirContext context = mlirModuleGetContext(module);
    mlirContextEnableMultithreading(context, true);
    mlirRegisterAllLLVMTranslations(context);
  }
  // What wraps each engine for Python, imported before any engine exists (nothing to
  // free if the import fails).
  nb::object wrap = nb::module_::import_(MAKE_MLIR_PYTHON_QUALNAME("execution_engine"))
                        .attr("ExecutionEngine")
                        .attr(MLIR_PYTHON_CAPI_FACTORY_ATTR);
  std::vector<MlirExecutionEngine> engines(modules.size(), MlirExecutionEngine{nullptr});
  {
    nb::gil_scoped_release released;
    auto compile = [&](size_t index) {
      MlirExecutionEngine engine =
          mlirExecutionEngineCreate(modules[index], optLevel, libraries.size(),
                                    libraries.data(), /*enableObjectDump=*/true, enablePic);
      if (!mlirExecutionEngineIsNull(engine) &&
          !mlirExecutionEngineLookupPacked(
              engine, mlirStringRefCreate(entries[index].data(), entries[index].size()))) {
        mlirExecutionEngineDestroy(engine);
        engine.ptr = nullptr;
      }
      engines[index] = engine;
    };
    std::vector<std::thread> threads;
    size_t started = 1;
    try {
      for (; started < modules.size(); ++started)
        threads.emplace_back(compile, started);
    } catch (const std::system_error &) {
      // No thread to be had: the rest compile on this one.
    }
    for (size_t index = started; index < modules.size(); ++index)
      compile(index);
    if (!modules.empty())
      compile(0);
    for (std::thread &thread : threads)
      thread.join();
  }
  bool failed = false;
  for (MlirExecutionEngine engine : engines)
    failed |= mlirExecutionEngineIsNull(engine);
  if (failed) {
    for (MlirExecutionEngine engine : engines)
      if (!mlirExecutionEngineIsNull(engine))
        mlirExecutionEngineDestroy(engine);
    throw std::runtime_error("Failure while creating the ExecutionEngine (LLVM's error "
                             "is on stderr), or its entry symbol is missing.");
  }
  // Each engine is handed to the Python binding's ExecutionEngine, which owns it from
  // then on (a capsule does not). On an error, what was not handed over is freed (the
  // engine being handed over is left alone: the binding may have freed it).
  std::vector<nb::object> wrapped;
  size_t next = 0;
  try {
    for (; next < engines.size(); ++next) {
      PyObject *capsule = mlirPythonExecutionEngineToCapsule(engines[next]);
      if (!capsule) {
        mlirExecutionEngineDestroy(engines[next]);
        throw nb::python_error();
      }
      wrapped.push_back(wrap(nb::steal<nb::object>(capsule)));
    }
  } catch (...) {
    for (size_t rest = next + 1; rest < engines.size(); ++rest)
      mlirExecutionEngineDestroy(engines[rest]);
    throw;
  }
  return wrapped;
}

} // namespace

NB_MODULE(_dynoParallelJit, m) {
  m.doc() = "JIT compiles of several modules at once, Python's GIL released";
  m.def("compile_at_once", &compileAtOnce, nb::arg("modules"), nb::arg("entries"),
        nb::arg("opt_level"), nb::arg("shared_libs"), nb::arg("enable_pic"),
        "ExecutionEngines for `modules`, each compiled whole (its symbol `entries[i]` "
        "looked up) before this returns, one thread per module. The modules may share a "
        "context; none may define a symbol another defines.");
}
