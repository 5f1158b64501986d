"""The transformers model zoo: real architectures from `transformers` (pinned 5.17.0, the
GPU machine's version), built from small configs with random weights; nothing is
downloaded. Decoder-only models with learned (GPT-2, OPT) and rotary (Llama, Qwen2)
positions and grouped-query attention (Llama, Qwen2), an encoder (BERT), an
encoder-decoder (BART), a vision transformer (ViT) and a convolutional vision model
(ResNet).

Each entry builds `(model, example_inputs)`; the model returns one tensor (logits or
hidden states), so compiled and eager outputs compare directly. `scale` grows the
batch/sequence for benchmarks; the tests use scale 1.
"""
import torch


def _tokens(vocab, batch, length, generator):
    return torch.randint(0, vocab, (batch, length), generator=generator)


class LogitsOnly(torch.nn.Module):
    """Calls a transformers model with keyword inputs and returns one tensor: its
    `logits`, else `last_hidden_state`."""

    def __init__(self, model, names):
        super().__init__()
        self.model = model
        self.names = names

    def forward(self, *inputs):
        output = self.model(**dict(zip(self.names, inputs)), return_dict=True)
        if getattr(output, "logits", None) is not None:
            return output.logits
        return output.last_hidden_state


def _decoder(config_class, **extra):
    def build(scale, generator):
        import transformers

        config = getattr(transformers, config_class)(**extra)
        cls = transformers.AutoModelForCausalLM
        model = cls.from_config(config)
        tokens = _tokens(config.vocab_size, 2 * scale, 32 * scale, generator)
        return LogitsOnly(model, ["input_ids"]), (tokens,)
    return build


def _bert(scale, generator):
    import transformers

    config = transformers.BertConfig(
        vocab_size=512, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
        intermediate_size=128, max_position_embeddings=128)
    model = transformers.BertModel(config, add_pooling_layer=False)
    tokens = _tokens(config.vocab_size, 2 * scale, 32 * scale, generator)
    return LogitsOnly(model, ["input_ids"]), (tokens,)


def _bart(scale, generator):
    import transformers

    config = transformers.BartConfig(
        vocab_size=512, d_model=64, encoder_layers=2, decoder_layers=2,
        encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=128,
        decoder_ffn_dim=128, max_position_embeddings=128)
    model = transformers.BartForConditionalGeneration(config)
    source = _tokens(config.vocab_size, 2 * scale, 32 * scale, generator)
    target = _tokens(config.vocab_size, 2 * scale, 16 * scale, generator)
    return LogitsOnly(model, ["input_ids", "decoder_input_ids"]), (source, target)


def _vit(scale, generator):
    import transformers

    config = transformers.ViTConfig(
        hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
        image_size=32, patch_size=8, num_labels=10)
    model = transformers.ViTForImageClassification(config)
    pixels = torch.randn(2 * scale, 3, 32, 32, generator=generator)
    return LogitsOnly(model, ["pixel_values"]), (pixels,)


def _resnet(scale, generator):
    import transformers

    config = transformers.ResNetConfig(
        embedding_size=16, hidden_sizes=[16, 32], depths=[1, 1], layer_type="basic",
        num_labels=10)
    model = transformers.ResNetForImageClassification(config)
    pixels = torch.randn(2 * scale, 3, 32, 32, generator=generator)
    return LogitsOnly(model, ["pixel_values"]), (pixels,)


_SMALL_DECODER = dict(vocab_size=512, hidden_size=64, intermediate_size=128,
                      num_hidden_layers=2, num_attention_heads=4,
                      max_position_embeddings=128)

ZOO = {
    # learned positions, GELU MLP, Conv1D projections
    "gpt2": _decoder("GPT2Config", vocab_size=512, n_embd=64, n_layer=2, n_head=4,
                     n_positions=128),
    # learned positions with an offset, ReLU MLP
    "opt": _decoder("OPTConfig", vocab_size=512, hidden_size=64, ffn_dim=128,
                    num_hidden_layers=2, num_attention_heads=4, word_embed_proj_dim=64,
                    max_position_embeddings=128),
    # rotary positions, RMSNorm, SwiGLU, grouped-query attention (4 heads, 2 KV heads)
    "llama": _decoder("LlamaConfig", num_key_value_heads=2, **_SMALL_DECODER),
    # rotary positions, GQA, biases on q/k/v
    "qwen2": _decoder("Qwen2Config", num_key_value_heads=2, **_SMALL_DECODER),
    "bert": _bert,
    "bart": _bart,
    "vit": _vit,
    "resnet": _resnet,
}


def build(name: str, dtype=torch.float32, scale: int = 1, seed: int = 0):
    """Returns (model in eval mode, example inputs), parameters and float inputs in
    `dtype`. Weights are random (seeded)."""
    generator = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    model, inputs = ZOO[name](scale, generator)
    model = model.eval().to(dtype)
    inputs = tuple(x.to(dtype) if x.is_floating_point() else x for x in inputs)
    return model, inputs
