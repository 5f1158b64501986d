"""torch.distributed's coalesced functional collectives (a list of tensors each), as one
collective per tensor: the single-tensor collectives are library calls on both targets
(library_calls.COLLECTIVE_OPS), started where the graph issues them and waited where the
graph waits for each result (collective_scheduling moves each start and wait on its own,
so every tensor's communication overlaps the work that does not read it).

What a coalesced call saves in eager, one launch for several tensors, is given up here;
the results are the same (each element is reduced, gathered or scattered alike).
"""
import torch

from .decompositions import decomposes

_COLLECTIVES = torch.ops._c10d_functional


@decomposes(_COLLECTIVES.all_reduce_coalesced.default)
def all_reduce_coalesced(inputs, reduce_op, group_name):
    return [_COLLECTIVES.all_reduce.default(tensor, reduce_op, group_name)
            for tensor in inputs]


@decomposes(_COLLECTIVES.all_gather_into_tensor_coalesced.default)
def all_gather_into_tensor_coalesced(inputs, group_size, group_name):
    return [_COLLECTIVES.all_gather_into_tensor.default(tensor, group_size, group_name)
            for tensor in inputs]


@decomposes(_COLLECTIVES.reduce_scatter_tensor_coalesced.default)
def reduce_scatter_tensor_coalesced(inputs, reduce_op, group_size, group_name):
    return [_COLLECTIVES.reduce_scatter_tensor.default(tensor, reduce_op, group_size,
                                                       group_name)
            for tensor in inputs]
