"""Ops that always run eagerly, each with its reason: their import gives wrong results.
Per-op fallback compiles the rest of their graph. Each entry was found by a sweep and is
covered by a regression test."""
import torch


def _routed_to_eager():
    aten = torch.ops.aten
    wrong_weights = ("torch-mlir's lowering ignores per_sample_weights "
                     "(wrong results, found by the OpInfo sweep)")
    return {
        aten._embedding_bag.default: wrong_weights,
        aten._embedding_bag_forward_only.default: wrong_weights,
    }


ROUTED_TO_EAGER = _routed_to_eager()
