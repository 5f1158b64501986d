"""The stages both targets share, from an ATen graph to a target's lowered module:
frontend (torch-mlir's FX import and lowering to linalg), graph_lowering (then Dyno's
passes in one dyno-opt run, the pipelines each target declares) and mlir_tools (the
tools run in subprocesses). The driver and the targets import from here; nothing here
imports them."""
