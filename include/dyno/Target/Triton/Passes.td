//===- Passes.td - The Triton target's passes ---------------*- tablegen -*-===//
#ifndef DYNO_TARGET_TRITON_PASSES_TD
#define DYNO_TARGET_TRITON_PASSES_TD

include "mlir/Pass/PassBase.td"

def DynoWriteTriton : Pass<"dyno-write-triton", "ModuleOp"> {
  let summary = "Write the Triton-level kernels as @triton.jit Python source to a file";
  let description = [{
    Prints what `dyno-translate --mlir-to-triton` prints (every Triton-level kernel as a
    `@triton.jit` function, then the `KERNELS` launch table) to `file`, and changes
    nothing. It ends the Triton target's compile of a graph, so that kernel formation,
    Triton lowering and translation run in one `dyno-opt` process:

    ```
    dyno-opt --pass-pipeline="builtin.module(dyno-triton-pipeline,
        dyno-write-triton{file=05-kernels.py})" 02-linalg.mlir -o 04-triton.mlir
    ```

    An op with no Triton spelling is an error (the translation's diagnostic) and leaves
    no file; so does a file that cannot be opened.
  }];
  let options = [
    Option<"file", "file", "std::string", /*default=*/"\"\"",
           "The Python file to write (overwritten)">
  ];
}

#endif // DYNO_TARGET_TRITON_PASSES_TD
