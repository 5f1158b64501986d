//===- dyno-opt.cpp - Dyno's pass-pipeline driver ---------------*- C++ -*-===//
//
// Every upstream and Dyno pass plus Dyno's named pipelines, e.g.
//   dyno-opt --dyno-cpu-pipeline graph.mlir
//
//===----------------------------------------------------------------------===//
#include "dyno/InitAll.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::dyno::registerAllPasses();
  mlir::DialectRegistry registry;
  mlir::dyno::registerAllDialects(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Dyno optimizer driver\n", registry));
}
