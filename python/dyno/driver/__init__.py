"""The compile of one captured graph: the driver (compiler: whole graph, per-op fallback
through partition, the compile cache), its stages (graph_lowering: frontend's import and
torch-mlir lowering, then Dyno's passes in one dyno-opt run through mlir_tools), and the
dumps and logs of each stage (debug)."""
