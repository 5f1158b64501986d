"""What Dyno does to the graphs Dynamo and AOTAutograd capture, before import: CUDA
autocast regions traced on CPU tensors (cuda_autocast), opaque script-object inputs put
aside (opaque_inputs), centred differences (centred_differences), collectives moved to
overlap the work between them (collective_scheduling), attention under a constant
causal mask run as causal attention (causal_masks), constant query scales moved into
attention's scale (attention_scales) and keys and values repeated for grouped-query
attention read unrepeated (grouped_query_attention)."""
