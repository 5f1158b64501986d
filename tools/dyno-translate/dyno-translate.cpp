//===- dyno-translate.cpp - Dyno's translation driver -----------*- C++ -*-===//
//
// Dyno's emitters plus upstream's translations, e.g.
//   dyno-translate --mlir-to-triton kernels.mlir -o kernels.py
//
//===----------------------------------------------------------------------===//
#include "dyno/Target/Triton/TranslateToTriton.h"
#include "mlir/InitAllTranslations.h"
#include "mlir/Support/LogicalResult.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

int main(int argc, char **argv) {
  mlir::registerAllTranslations();
  mlir::dyno::registerToTritonTranslation();
  return mlir::failed(
      mlir::mlirTranslateMain(argc, argv, "Dyno translation driver\n")) ? 1 : 0;
}
