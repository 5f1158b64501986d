"""The compile of one captured graph: the driver (compiler: the target chosen from the
inputs' device, whole graph, per-op fallback through partition, the compile cache) and
the dumps and logs of each stage (debug). What it compiles with is a target's `lower`
and `load` (targets/target.py); the stages both targets share are in lowering/."""
