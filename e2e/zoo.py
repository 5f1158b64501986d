"""The transformers model zoo: real architectures from `transformers` (pinned 5.17.0, the
GPU machine's version), built from small configs with random weights; nothing is
downloaded. Decoder-only models with learned (GPT-2, OPT) and rotary (Llama, Qwen2)
positions and grouped-query attention (Llama, Qwen2), an encoder (BERT), an
encoder-decoder (BART), a vision transformer (ViT) and a convolutional vision model
(ResNet).

Each entry builds `(model, example_inputs)`; the model returns one tensor (logits or
hidden states), so compiled and eager outputs compare directly. Sizes: "test" (width 64,
2 layers, batch 2 x 32 tokens: the e2e tests), "cpu" (width 256, 2 layers, batch 4 x 128
tokens: the CPU benchmark) and "bench" (width 512, 4 layers, batch 8 x 256 tokens: the
GPU benchmark). Needs only torch and transformers, so the GPU machine
builds the same models (same seed, same weights) as the export machine.
"""
import torch

SIZES = {
    # width, feed-forward width, layers, heads, batch, tokens (images: side)
    "test": dict(width=64, ffn=128, layers=2, heads=4, batch=2, tokens=32, side=32),
    "cpu": dict(width=256, ffn=1024, layers=2, heads=4, batch=4, tokens=128, side=32),
    "bench": dict(width=512, ffn=2048, layers=4, heads=8, batch=8, tokens=256, side=64),
}
VOCAB = 512

# "real": the standard configurations users run, one per model that has one (the sizes
# in the keys override "bench"; `vocab`, `kv_heads`, `patch` and `resnet` are the
# models' own). build(name, size="real") raises KeyError for a model not listed here.
REAL_SIZES = {
    # GPT-2 124M, 8 sequences of 512 tokens
    "gpt2": dict(width=768, ffn=3072, layers=12, heads=12, batch=8, tokens=512, vocab=50257),
    # an 8-layer Llama of width 2048 with grouped-query attention (32 heads, 4 KV heads)
    "llama": dict(width=2048, ffn=5632, layers=8, heads=32, kv_heads=4, batch=4, tokens=512,
                  vocab=32000),
    # BERT-base, 16 sequences of 256 tokens
    "bert": dict(width=768, ffn=3072, layers=12, heads=12, batch=16, tokens=256, vocab=30522),
    # ResNet-50, 32 images of 224 x 224
    "resnet": dict(batch=32, side=224, resnet="50"),
    # ViT-base/16, 32 images of 224 x 224
    "vit": dict(width=768, ffn=3072, layers=12, heads=12, batch=32, side=224, patch=16),
}


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


def _tokens(s, generator, length=None):
    return torch.randint(0, s.get("vocab", VOCAB), (s["batch"], length or s["tokens"]),
                         generator=generator)


def _gpt2(s, generator):
    import transformers
    config = transformers.GPT2Config(
        vocab_size=s.get("vocab", VOCAB), n_embd=s["width"], n_layer=s["layers"], n_head=s["heads"],
        n_positions=1024, bos_token_id=0, eos_token_id=0, resid_pdrop=0.0, embd_pdrop=0.0,
        attn_pdrop=0.0)
    return transformers.GPT2LMHeadModel(config), ["input_ids"], (_tokens(s, generator),)


def _opt(s, generator):
    import transformers
    config = transformers.OPTConfig(
        vocab_size=VOCAB, hidden_size=s["width"], ffn_dim=s["ffn"],
        num_hidden_layers=s["layers"], num_attention_heads=s["heads"],
        word_embed_proj_dim=s["width"], max_position_embeddings=1024, bos_token_id=0,
        eos_token_id=0, pad_token_id=1, dropout=0.0)
    return transformers.OPTForCausalLM(config), ["input_ids"], (_tokens(s, generator),)


def _rotary(config_name, model_name, **extra):
    # rotary positions, RMSNorm, SwiGLU, grouped-query attention (half as many KV heads)
    def build(s, generator):
        import transformers
        config = getattr(transformers, config_name)(
            vocab_size=s.get("vocab", VOCAB), hidden_size=s["width"],
            intermediate_size=s["ffn"], num_hidden_layers=s["layers"],
            num_attention_heads=s["heads"],
            num_key_value_heads=s.get("kv_heads", s["heads"] // 2),
            max_position_embeddings=1024, **extra)
        model = getattr(transformers, model_name)(config)
        return model, ["input_ids"], (_tokens(s, generator),)
    return build


def _bert(s, generator):
    import transformers
    config = transformers.BertConfig(
        vocab_size=s.get("vocab", VOCAB), hidden_size=s["width"], num_hidden_layers=s["layers"],
        num_attention_heads=s["heads"], intermediate_size=s["ffn"],
        max_position_embeddings=1024)
    model = transformers.BertModel(config, add_pooling_layer=False)
    return model, ["input_ids"], (_tokens(s, generator),)


def _bart(s, generator):
    import transformers
    config = transformers.BartConfig(
        vocab_size=VOCAB, d_model=s["width"], encoder_layers=s["layers"] // 2 or 1,
        decoder_layers=s["layers"] // 2 or 1, encoder_attention_heads=s["heads"],
        decoder_attention_heads=s["heads"], encoder_ffn_dim=s["ffn"], decoder_ffn_dim=s["ffn"],
        max_position_embeddings=1024)
    model = transformers.BartForConditionalGeneration(config)
    source = _tokens(s, generator)
    target = _tokens(s, generator, s["tokens"] // 2)
    return model, ["input_ids", "decoder_input_ids"], (source, target)


def _vit(s, generator):
    import transformers
    config = transformers.ViTConfig(
        hidden_size=s["width"], num_hidden_layers=s["layers"], num_attention_heads=s["heads"],
        intermediate_size=s["ffn"], image_size=s["side"], patch_size=s.get("patch", 8),
        num_labels=10)
    model = transformers.ViTForImageClassification(config)
    pixels = torch.randn(s["batch"], 3, s["side"], s["side"], generator=generator)
    return model, ["pixel_values"], (pixels,)


def _resnet(s, generator):
    import transformers
    if s.get("resnet") == "50":  # ResNet-50: bottleneck blocks, 1000 classes
        config = transformers.ResNetConfig(
            embedding_size=64, hidden_sizes=[256, 512, 1024, 2048], depths=[3, 4, 6, 3],
            layer_type="bottleneck", num_labels=1000)
        batch = s["batch"]
    else:
        width = s["width"] // 4
        config = transformers.ResNetConfig(
            embedding_size=width, hidden_sizes=[width, 2 * width], depths=[1, 1],
            layer_type="basic", num_labels=10)
        batch = s["batch"] * 4
    model = transformers.ResNetForImageClassification(config)
    pixels = torch.randn(batch, 3, s["side"], s["side"], generator=generator)
    return model, ["pixel_values"], (pixels,)


def _t5(s, generator):
    import transformers
    config = transformers.T5Config(
        vocab_size=VOCAB, d_model=s["width"], d_kv=s["width"] // s["heads"], d_ff=s["ffn"],
        num_layers=s["layers"] // 2 or 1, num_decoder_layers=s["layers"] // 2 or 1,
        num_heads=s["heads"], relative_attention_num_buckets=32, dropout_rate=0.0,
        decoder_start_token_id=0, pad_token_id=0)
    model = transformers.T5ForConditionalGeneration(config)
    source = _tokens(s, generator)
    target = _tokens(s, generator, s["tokens"] // 2)
    return model, ["input_ids", "decoder_input_ids"], (source, target)


def _swin(s, generator):
    import transformers
    width = s["width"] // 4
    config = transformers.SwinConfig(
        image_size=s["side"], patch_size=4, embed_dim=width, depths=[2, 2],
        num_heads=[max(1, s["heads"] // 4), max(1, s["heads"] // 2)], window_size=4,
        mlp_ratio=4.0, num_labels=10)
    model = transformers.SwinForImageClassification(config)
    pixels = torch.randn(s["batch"], 3, s["side"], s["side"], generator=generator)
    return model, ["pixel_values"], (pixels,)


def _convnext(s, generator):
    import transformers
    width = s["width"] // 4
    config = transformers.ConvNextConfig(
        num_stages=2, hidden_sizes=[width, 2 * width], depths=[2, 2], num_labels=10)
    model = transformers.ConvNextForImageClassification(config)
    pixels = torch.randn(s["batch"], 3, s["side"], s["side"], generator=generator)
    return model, ["pixel_values"], (pixels,)


def _wav2vec2(s, generator):
    import transformers
    config = transformers.Wav2Vec2Config(
        hidden_size=s["width"], num_hidden_layers=s["layers"], num_attention_heads=s["heads"],
        intermediate_size=s["ffn"], conv_dim=(s["width"] // 2,) * 3, conv_stride=(5, 4, 2),
        conv_kernel=(10, 4, 2), num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4,
        hidden_dropout=0.0, attention_dropout=0.0, activation_dropout=0.0,
        feat_proj_dropout=0.0, layerdrop=0.0, mask_time_prob=0.0, do_stable_layer_norm=True,
        feat_extract_norm="layer")
    model = transformers.Wav2Vec2Model(config)
    samples = torch.randn(s["batch"], s["tokens"] * 40, generator=generator)
    return model, ["input_values"], (samples,)


def _mistral(s, generator):
    # a window of half the sequence, so that the window masks
    build = _rotary("MistralConfig", "MistralForCausalLM", sliding_window=s["tokens"] // 2)
    return build(s, generator)


def _mixtral(s, generator):
    import transformers
    config = transformers.MixtralConfig(
        vocab_size=VOCAB, hidden_size=s["width"], intermediate_size=s["ffn"] // 2,
        num_hidden_layers=s["layers"], num_attention_heads=s["heads"],
        num_key_value_heads=s["heads"] // 2, num_local_experts=4, num_experts_per_tok=2,
        max_position_embeddings=1024, router_jitter_noise=0.0)
    model = transformers.MixtralForCausalLM(config)
    return model, ["input_ids"], (_tokens(s, generator),)


ZOO = {
    "gpt2": _gpt2,      # learned positions, GELU MLP, Conv1D projections
    "opt": _opt,        # learned positions with an offset, ReLU MLP
    "llama": _rotary("LlamaConfig", "LlamaForCausalLM"),
    "qwen2": _rotary("Qwen2Config", "Qwen2ForCausalLM"),  # also biases on q/k/v
    "bert": _bert,      # encoder
    "bart": _bart,      # encoder-decoder
    "vit": _vit,        # vision transformer
    "resnet": _resnet,  # convolutions, batch norm
}

# More architecture families: what the zoo above was not tuned on. Benchmarks take them
# by name like the zoo's own (build() knows both); e2e/test_zoo_families.py checks them.
FAMILIES = {
    "t5": _t5,              # encoder-decoder, relative position bias
    "mistral": _mistral,    # sliding-window, grouped-query attention
    "swin": _swin,          # windowed attention, shifted windows
    "convnext": _convnext,  # 7x7 depthwise convolutions, layer norm
    "wav2vec2": _wav2vec2,  # speech: convolutional feature extractor, then an encoder
    "mixtral": _mixtral,    # mixture of experts (4 experts, top 2)
}


def build(name: str, dtype=torch.float32, size: str = "test", seed: int = 0):
    """Returns (model in eval mode, example inputs): weights random (seeded), parameters
    and float inputs in `dtype`."""
    generator = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    if size == "real":
        if name not in REAL_SIZES:
            raise KeyError(f"{name} has no \"real\" size (those that do: "
                           f"{', '.join(REAL_SIZES)})")
        sizes = dict(SIZES["bench"], **REAL_SIZES[name])
    else:
        sizes = SIZES[size]
    model, names, inputs = {**ZOO, **FAMILIES}[name](sizes, generator)
    model = LogitsOnly(model, names).eval().to(dtype)
    inputs = tuple(x.to(dtype) if x.is_floating_point() else x for x in inputs)
    return model, inputs


def cpu_benchmark_model(name: str, dtype=torch.float32):
    """A zoo or family model at its "cpu" size, or the model of models.py's
    suite with that name: (model in eval mode, inputs), parameters and float inputs in
    `dtype`."""
    if name in ZOO or name in FAMILIES:
        return build(name, dtype, size="cpu")
    from models import suite

    for entry, model, inputs in suite():
        if entry == name:
            return model.eval().to(dtype), tuple(
                x.to(dtype) if x.is_floating_point() else x for x in inputs)
    raise KeyError(f"{name}: neither a zoo model ({', '.join([*ZOO, *FAMILIES])}) nor a "
                   "suite model")


def training_loss(output, first_input):
    """The loss a training step of a zoo model minimizes: next-token cross entropy for
    models fed tokens, the mean square of the output for the others (images)."""
    output = output.to(torch.promote_types(output.dtype, torch.float32))
    if first_input.is_floating_point():
        return output.square().mean()
    logits = output[:, :-1].reshape(-1, output.shape[-1])
    return torch.nn.functional.cross_entropy(logits, first_input[:, 1:].reshape(-1))
