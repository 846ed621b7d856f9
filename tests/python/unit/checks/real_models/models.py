"""A corpus of real-model-shaped models, in our own words, for the checks' tests (issue 14).

Each class has the shape of a model people actually run, so the checks meet what real code does:

- ``GPT`` / ``GPTConfig``: nanoGPT's shape: ``forward(idx, targets=None)`` returns ``(logits, loss)``,
  logits of the last position only when there are no targets; weight tying; dropout modules and a
  float ``dropout`` attribute used as ``dropout_p=... if self.training else 0``;
  ``GPTConfig(cut_attention_residual=True)`` plants ``.detach()`` on the attention branch (its
  parameters never get a gradient, the loss still falls).
- ``MinGPT``: minGPT's shape: a config object with attributes, an explicit causal-mask buffer,
  always full logits, ``ignore_index=-1``.
- ``GPTModel``: LLMs-from-scratch's shape: a config dict, ``forward(in_idx)`` returns logits only,
  hand-written LayerNorm (scale/shift) and multi-head attention with a mask buffer.
- ``MnistNet``: pytorch/examples mnist ``Net`` (28x28, fc1 9216 -> 128, two Dropouts, log_softmax).
- ``DCGANGenerator`` / ``DCGANDiscriminator``: pytorch/examples dcgan (BatchNorm, Sigmoid output
  flattened to (B,)); the discriminator is the GAN case.
- ``VAE`` and :func:`vae_loss`: pytorch/examples vae (returns recon, mu, logvar; BCE sum + KL).
- ``RNNModel``: pytorch/examples word_language_model (``forward(input, hidden)`` with an LSTM
  hidden tuple, sequence-first, dropout between layers, log_softmax over (T*B, V)).
- ``WordTransformer``: the word-LM Transformer (sequence-first, causal mask, log_softmax (T, B, V)).
- ``DropoutCNN``: a small CNN with Dropout(0.2), constructible with no arguments (class alone).
- ``SiameseNetwork``: pytorch/examples siamese_network (one tower applied to two images,
  ``forward(input1, input2)``, the two embeddings concatenated, a Linear-ReLU-Linear head and a
  sigmoid; BCE against a float "same class" label per pair). A small conv tower stands for the
  example's resnet18 (torchvision is not a dependency).
- ``CharLM`` / ``ConvAutoencoder``: a token model and a sigmoid conv autoencoder, constructible with
  no arguments (class alone: the targets and loss are inferred).
- :func:`hf_gpt2` / :func:`hf_bert` / :func:`hf_t5` / :func:`hf_vit`: Hugging Face ``transformers``
  models from tiny configs (no download); ``None`` when transformers is not installed. T5 is an
  encoder-decoder whose ``T5LayerNorm`` computes its variance in float32 whatever the input's
  dtype; ViT takes ``pixel_values``.

``example_<name>()`` functions return each model's ``torchdoctor_example()`` value in the dict
contract (docs/checks.md): ``{"model", "inputs", "kwargs", "targets", "loss"}``.

Use: ``import real_models as M`` in a test of this folder (its conftest.py registers this file
under that name), or, from a model file a worker loads, put :data:`HERE` on ``sys.path`` and
``from models import GPT``. Small sizes everywhere: every model trains a batch in seconds on a CPU.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
VOCAB = 65  # the shakespeare_char vocabulary of nanoGPT
T5_VOCAB = 50
SEQ = 16
BATCH = 8


def _gen(seed: int = 0) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def token_batch(vocab: int = VOCAB, batch: int = BATCH, seq: int = SEQ, seed: int = 0):
    """Ids and next-token targets, the way a language model's data loader yields them."""
    data = torch.randint(0, vocab, (batch, seq + 1), generator=_gen(seed))
    return data[:, :-1].contiguous(), data[:, 1:].contiguous()


# ---------------------------------------------------------------- nanoGPT shape
@dataclass
class GPTConfig:
    block_size: int = 32
    vocab_size: int = VOCAB
    n_layer: int = 2
    n_head: int = 2
    n_embd: int = 32
    dropout: float = 0.0
    bias: bool = True
    cut_attention_residual: bool = False  # the injected bug: .detach() on the attention branch


class LayerNorm(nn.Module):
    """LayerNorm with an optional bias (nanoGPT's)."""

    def __init__(self, ndim: int, bias: bool):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(ndim))
        self.bias = nn.Parameter(torch.zeros(ndim)) if bias else None

    def forward(self, x):
        return F.layer_norm(x, self.weight.shape, self.weight, self.bias, 1e-5)


class CausalSelfAttention(nn.Module):
    def __init__(self, config: GPTConfig):
        super().__init__()
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd, bias=config.bias)
        self.c_proj = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)
        self.attn_dropout = nn.Dropout(config.dropout)
        self.resid_dropout = nn.Dropout(config.dropout)
        self.n_head, self.n_embd, self.dropout = config.n_head, config.n_embd, config.dropout

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, dropout_p=self.dropout if self.training else 0, is_causal=True)
        return self.resid_dropout(self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C)))


class GPTMLP(nn.Module):
    def __init__(self, config: GPTConfig):
        super().__init__()
        self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd, bias=config.bias)
        self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd, bias=config.bias)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x):
        return self.dropout(self.c_proj(F.gelu(self.c_fc(x))))


class Block(nn.Module):
    def __init__(self, config: GPTConfig):
        super().__init__()
        self.ln_1, self.attn = LayerNorm(config.n_embd, config.bias), CausalSelfAttention(config)
        self.ln_2, self.mlp = LayerNorm(config.n_embd, config.bias), GPTMLP(config)
        self.cut = config.cut_attention_residual

    def forward(self, x):
        a = self.attn(self.ln_1(x))
        x = x + (a.detach() if self.cut else a)
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, config: GPTConfig):
        super().__init__()
        self.config = config
        self.transformer = nn.ModuleDict(
            dict(
                wte=nn.Embedding(config.vocab_size, config.n_embd),
                wpe=nn.Embedding(config.block_size, config.n_embd),
                drop=nn.Dropout(config.dropout),
                h=nn.ModuleList([Block(config) for _ in range(config.n_layer)]),
                ln_f=LayerNorm(config.n_embd, config.bias),
            )
        )
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        self.transformer.wte.weight = self.lm_head.weight  # weight tying

    def forward(self, idx, targets=None):
        t = idx.size(1)
        pos = torch.arange(0, t, dtype=torch.long, device=idx.device)
        x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))
        for block in self.transformer.h:
            x = block(x)
        x = self.transformer.ln_f(x)
        if targets is not None:
            logits = self.lm_head(x)
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
        else:  # inference: only the last position
            logits, loss = self.lm_head(x[:, [-1], :]), None
        return logits, loss


# ---------------------------------------------------------------- minGPT shape
class MinGPTConfig:
    """minGPT's CfgNode: attributes set one by one."""

    def __init__(self, **kw):
        self.vocab_size, self.block_size, self.n_layer, self.n_head, self.n_embd = VOCAB, 32, 2, 2, 32
        self.embd_pdrop = self.resid_pdrop = self.attn_pdrop = 0.1
        self.__dict__.update(kw)


class MinAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.c_attn, self.c_proj = nn.Linear(config.n_embd, 3 * config.n_embd), nn.Linear(config.n_embd, config.n_embd)
        self.attn_dropout, self.resid_dropout = nn.Dropout(config.attn_pdrop), nn.Dropout(config.resid_pdrop)
        mask = torch.tril(torch.ones(config.block_size, config.block_size))
        self.register_buffer("bias", mask.view(1, 1, config.block_size, config.block_size))
        self.n_head, self.n_embd = config.n_head, config.n_embd

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = self.attn_dropout(F.softmax(att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf")), dim=-1))
        return self.resid_dropout(self.c_proj((att @ v).transpose(1, 2).contiguous().view(B, T, C)))


class MinBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.ln_1, self.attn, self.ln_2 = nn.LayerNorm(config.n_embd), MinAttention(config), nn.LayerNorm(config.n_embd)
        self.mlp = nn.ModuleDict(
            dict(
                c_fc=nn.Linear(config.n_embd, 4 * config.n_embd),
                c_proj=nn.Linear(4 * config.n_embd, config.n_embd),
                dropout=nn.Dropout(config.resid_pdrop),
            )
        )

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        m = self.mlp
        return x + m.dropout(m.c_proj(F.gelu(m.c_fc(self.ln_2(x)))))


class MinGPT(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.block_size = config.block_size
        self.transformer = nn.ModuleDict(
            dict(
                wte=nn.Embedding(config.vocab_size, config.n_embd),
                wpe=nn.Embedding(config.block_size, config.n_embd),
                drop=nn.Dropout(config.embd_pdrop),
                h=nn.ModuleList([MinBlock(config) for _ in range(config.n_layer)]),
                ln_f=nn.LayerNorm(config.n_embd),
            )
        )
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)

    def forward(self, idx, targets=None):
        pos = torch.arange(0, idx.size(1), dtype=torch.long, device=idx.device).unsqueeze(0)
        x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))
        for block in self.transformer.h:
            x = block(x)
        logits = self.lm_head(self.transformer.ln_f(x))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
        return logits, loss


# ---------------------------------------------------------------- LLMs-from-scratch shape
GPT_CONFIG_TINY = {
    "vocab_size": VOCAB,
    "context_length": 32,
    "emb_dim": 32,
    "n_heads": 2,
    "n_layers": 2,
    "drop_rate": 0.1,
    "qkv_bias": False,
}


class ScratchLayerNorm(nn.Module):
    def __init__(self, emb_dim):
        super().__init__()
        self.eps, self.scale, self.shift = 1e-5, nn.Parameter(torch.ones(emb_dim)), nn.Parameter(torch.zeros(emb_dim))

    def forward(self, x):
        mean, var = x.mean(dim=-1, keepdim=True), x.var(dim=-1, keepdim=True, unbiased=False)
        return self.scale * (x - mean) / torch.sqrt(var + self.eps) + self.shift


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.d_out, self.num_heads, self.head_dim = d_out, num_heads, d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj, self.dropout = nn.Linear(d_out, d_out), nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def forward(self, x):
        b, n, _ = x.shape
        q, k, v = (
            w(x).view(b, n, self.num_heads, self.head_dim).transpose(1, 2)
            for w in (self.W_query, self.W_key, self.W_value)
        )
        scores = (q @ k.transpose(2, 3)).masked_fill(self.mask.bool()[:n, :n], -torch.inf)
        weights = self.dropout(torch.softmax(scores / k.shape[-1] ** 0.5, dim=-1))
        return self.out_proj((weights @ v).transpose(1, 2).contiguous().view(b, n, self.d_out))


class TransformerBlock(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        d = cfg["emb_dim"]
        self.att = MultiHeadAttention(d, d, cfg["context_length"], cfg["drop_rate"], cfg["n_heads"], cfg["qkv_bias"])
        self.ff = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
        self.norm1, self.norm2 = ScratchLayerNorm(d), ScratchLayerNorm(d)
        self.drop_shortcut = nn.Dropout(cfg["drop_rate"])

    def forward(self, x):
        x = x + self.drop_shortcut(self.att(self.norm1(x)))
        return x + self.drop_shortcut(self.ff(self.norm2(x)))


class GPTModel(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["emb_dim"])
        self.pos_emb = nn.Embedding(cfg["context_length"], cfg["emb_dim"])
        self.drop_emb = nn.Dropout(cfg["drop_rate"])
        self.trf_blocks = nn.Sequential(*[TransformerBlock(cfg) for _ in range(cfg["n_layers"])])
        self.final_norm = ScratchLayerNorm(cfg["emb_dim"])
        self.out_head = nn.Linear(cfg["emb_dim"], cfg["vocab_size"], bias=False)

    def forward(self, in_idx):
        pos = self.pos_emb(torch.arange(in_idx.shape[1], device=in_idx.device))
        x = self.drop_emb(self.tok_emb(in_idx) + pos)
        return self.out_head(self.final_norm(self.trf_blocks(x)))


# ---------------------------------------------------------------- pytorch/examples shapes
class MnistNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1, self.conv2 = nn.Conv2d(1, 32, 3, 1), nn.Conv2d(32, 64, 3, 1)
        self.dropout1, self.dropout2 = nn.Dropout(0.25), nn.Dropout(0.5)
        self.fc1, self.fc2 = nn.Linear(9216, 128), nn.Linear(128, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv2(F.relu(self.conv1(x)))), 2)
        x = F.relu(self.fc1(torch.flatten(self.dropout1(x), 1)))
        return F.log_softmax(self.fc2(self.dropout2(x)), dim=1)


class DCGANGenerator(nn.Module):
    def __init__(self, nz: int = 16, ngf: int = 8, nc: int = 3):
        super().__init__()
        self.nz = nz
        self.main = nn.Sequential(
            nn.ConvTranspose2d(nz, ngf * 4, 4, 1, 0, bias=False),
            nn.BatchNorm2d(ngf * 4),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 4, ngf * 2, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ngf * 2),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 2, nc, 4, 2, 1, bias=False),
            nn.Tanh(),
        )

    def forward(self, input):
        return self.main(input)


class DCGANDiscriminator(nn.Module):
    def __init__(self, nc: int = 3, ndf: int = 8):
        super().__init__()
        self.main = nn.Sequential(
            nn.Conv2d(nc, ndf, 4, 2, 1, bias=False),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ndf * 2),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf * 2, 1, 4, 1, 0, bias=False),
            nn.Sigmoid(),
        )

    def forward(self, input):
        return self.main(input).view(-1, 1).squeeze(1)


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc21, self.fc22 = nn.Linear(784, 400), nn.Linear(400, 20), nn.Linear(400, 20)
        self.fc3, self.fc4 = nn.Linear(20, 400), nn.Linear(400, 784)

    def encode(self, x):
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu, logvar):
        std = torch.exp(0.5 * logvar)
        return mu + torch.randn_like(std) * std

    def forward(self, x):
        mu, logvar = self.encode(x.view(-1, 784))
        z = self.reparameterize(mu, logvar)
        return torch.sigmoid(self.fc4(F.relu(self.fc3(z)))), mu, logvar


def vae_loss(outputs, x):
    """Reconstruction (BCE summed) + KL divergence: needs all three outputs."""
    recon, mu, logvar = outputs
    bce = F.binary_cross_entropy(recon, x.view(-1, 784), reduction="sum")
    return bce - 0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())


class RNNModel(nn.Module):
    def __init__(self, rnn_type, ntoken, ninp, nhid, nlayers, dropout=0.5, tie_weights=False):
        super().__init__()
        self.ntoken, self.drop = ntoken, nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        if tie_weights:
            self.decoder.weight = self.encoder.weight
        self.rnn_type, self.nhid, self.nlayers = rnn_type, nhid, nlayers

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        decoded = self.decoder(self.drop(output)).view(-1, self.ntoken)
        return F.log_softmax(decoded, dim=1), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        if self.rnn_type == "LSTM":
            return (weight.new_zeros(self.nlayers, bsz, self.nhid), weight.new_zeros(self.nlayers, bsz, self.nhid))
        return weight.new_zeros(self.nlayers, bsz, self.nhid)


class WordTransformer(nn.Module):
    """The word-LM Transformer: sequence-first (T, B), causal mask, log_softmax over the vocabulary."""

    def __init__(
        self, ntoken: int = VOCAB, ninp: int = 32, nhead: int = 2, nhid: int = 64, nlayers: int = 2, dropout=0.5
    ):
        super().__init__()
        self.ninp, self.encoder = ninp, nn.Embedding(ntoken, ninp)
        self.pos_drop = nn.Dropout(dropout)
        layer = nn.TransformerEncoderLayer(ninp, nhead, nhid, dropout)
        self.transformer = nn.TransformerEncoder(layer, nlayers, enable_nested_tensor=False)
        self.decoder = nn.Linear(ninp, ntoken)

    def forward(self, src, has_mask=True):
        t = src.size(0)
        mask = nn.Transformer.generate_square_subsequent_mask(t) if has_mask else None
        pos = (torch.arange(t).float() / t).view(t, 1, 1)
        x = self.pos_drop(self.encoder(src) * math.sqrt(self.ninp) + pos)
        return F.log_softmax(self.decoder(self.transformer(x, mask, is_causal=has_mask)), dim=-1)


class DropoutCNN(nn.Module):
    """A correct small CNN with Dropout(0.2): the overfit test must not call it a FAIL."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.drop = nn.Dropout(0.2)
        self.fc = nn.Linear(8 * 16 * 16, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv(x)), 2)
        return self.fc(self.drop(torch.flatten(x, 1)))


class SiameseNetwork(nn.Module):
    """pytorch/examples siamese_network: one tower for both images, the embeddings concatenated."""

    def __init__(self, channels: int = 8):
        super().__init__()
        self.tower = nn.Sequential(  # the example's resnet18 without its fc, in small
            nn.Conv2d(1, channels, 3, 2, 1, bias=False),
            nn.BatchNorm2d(channels),
            nn.ReLU(inplace=True),
            nn.Conv2d(channels, 2 * channels, 3, 2, 1, bias=False),
            nn.BatchNorm2d(2 * channels),
            nn.ReLU(inplace=True),
            nn.AdaptiveAvgPool2d((1, 1)),
        )
        self.fc_in_features = 2 * channels
        self.fc = nn.Sequential(nn.Linear(self.fc_in_features * 2, 32), nn.ReLU(inplace=True), nn.Linear(32, 1))
        self.sigmoid = nn.Sigmoid()
        self.fc.apply(self.init_weights)

    def init_weights(self, m):
        if isinstance(m, nn.Linear):
            torch.nn.init.xavier_uniform_(m.weight)
            m.bias.data.fill_(0.01)

    def forward_once(self, x):
        output = self.tower(x)
        return output.view(output.size()[0], -1)

    def forward(self, input1, input2):
        output = torch.cat((self.forward_once(input1), self.forward_once(input2)), 1)
        return self.sigmoid(self.fc(output))


class CharLM(nn.Module):
    """A character-level language model constructible with no arguments (class alone): Embedding,
    batch-first GRU, a head over the vocabulary; ``(B, T)`` ids -> ``(B, T, V)`` logits."""

    def __init__(self, vocab: int = VOCAB, emb: int = 32, hidden: int = 64):
        super().__init__()
        self.embed = nn.Embedding(vocab, emb)
        self.rnn = nn.GRU(emb, hidden, batch_first=True)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, idx):
        h, _ = self.rnn(self.embed(idx))
        return self.head(h)


class ConvAutoencoder(nn.Module):
    """A conv autoencoder with a sigmoid decoder returning only the reconstruction (class alone)."""

    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(1, 16, 3, 2, 1), nn.ReLU(), nn.Conv2d(16, 32, 3, 2, 1), nn.ReLU())
        self.dec = nn.Sequential(
            nn.ConvTranspose2d(32, 16, 4, 2, 1), nn.ReLU(), nn.ConvTranspose2d(16, 1, 4, 2, 1), nn.Sigmoid()
        )

    def forward(self, x):
        return self.dec(self.enc(x))


# ---------------------------------------------------------------- Hugging Face (tiny configs, no download)
def hf_gpt2():
    try:
        from transformers import GPT2Config, GPT2LMHeadModel
    except ImportError:
        return None
    return GPT2LMHeadModel(
        GPT2Config(n_layer=2, n_embd=32, n_head=2, vocab_size=VOCAB, n_positions=32, bos_token_id=0, eos_token_id=0)
    )


def hf_bert():
    try:
        from transformers import BertConfig, BertForSequenceClassification
    except ImportError:
        return None
    config = BertConfig(
        vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64, num_labels=3
    )
    return BertForSequenceClassification(config)


def hf_t5():
    try:
        from transformers import T5Config, T5ForConditionalGeneration
    except ImportError:
        return None
    config = T5Config(
        vocab_size=T5_VOCAB,
        d_model=32,
        d_kv=16,
        d_ff=64,
        num_layers=1,
        num_decoder_layers=1,
        num_heads=2,
        decoder_start_token_id=0,
        pad_token_id=0,
        eos_token_id=1,
    )
    return T5ForConditionalGeneration(config)


def hf_vit():
    try:
        from transformers import ViTConfig, ViTForImageClassification
    except ImportError:
        return None
    config = ViTConfig(
        image_size=16,
        patch_size=4,
        num_channels=3,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        num_labels=3,
    )
    return ViTForImageClassification(config)


# ---------------------------------------------------------------- examples, in the dict contract
def example_gpt(**config) -> dict:
    idx, targets = token_batch()
    return {"model": GPT(GPTConfig(**config)), "inputs": (idx,), "targets": targets}


def example_mingpt() -> dict:
    idx, targets = token_batch()
    return {"model": MinGPT(MinGPTConfig()), "inputs": (idx,), "targets": targets}


def example_gptmodel() -> dict:
    idx, targets = token_batch()
    return {"model": GPTModel(GPT_CONFIG_TINY), "inputs": (idx,), "targets": targets}


def example_mnist() -> dict:
    x = torch.randn(BATCH, 1, 28, 28, generator=_gen(1))
    return {"model": MnistNet(), "inputs": (x,), "targets": torch.arange(BATCH) % 10, "loss": F.nll_loss}


def example_discriminator() -> dict:
    x = torch.randn(BATCH, 3, 16, 16, generator=_gen(2))
    real = torch.tensor([1.0, 0.0] * (BATCH // 2))
    return {"model": DCGANDiscriminator(), "inputs": (x,), "targets": real, "loss": F.binary_cross_entropy}


def example_vae() -> dict:
    x = torch.rand(BATCH, 1, 28, 28, generator=_gen(3))  # soft targets: BCE(x, x) > 0
    return {"model": VAE(), "inputs": (x,), "targets": x, "loss": vae_loss}


def example_rnn(rnn_type: str = "LSTM") -> dict:
    model = RNNModel(rnn_type, VOCAB, 32, 32, 2, dropout=0.5)
    ids, targets = token_batch(seed=4)
    return {
        "model": model,
        "inputs": (ids.t().contiguous(), model.init_hidden(BATCH)),  # sequence-first, hidden tuple
        "targets": targets.t().reshape(-1),
        "loss": F.nll_loss,
    }


def example_word_transformer() -> dict:
    ids, targets = token_batch(seed=5)
    return {"model": WordTransformer(), "inputs": (ids.t().contiguous(),), "targets": targets.t().contiguous()}


def example_hf_gpt2() -> dict | None:
    model = hf_gpt2()
    if model is None:
        return None
    ids, _ = token_batch(seed=6)
    batch = {"input_ids": ids, "attention_mask": torch.ones_like(ids)}
    return {"model": model, "kwargs": {**batch, "labels": ids}}


def example_hf_bert() -> dict | None:
    model = hf_bert()
    if model is None:
        return None
    ids, _ = token_batch(seed=7)
    batch = {"input_ids": ids, "attention_mask": torch.ones_like(ids), "token_type_ids": torch.zeros_like(ids)}
    return {"model": model, "kwargs": {**batch, "labels": torch.arange(BATCH) % 3}}


def example_hf_t5() -> dict | None:
    """A translation-shaped batch: source ids, target ids as ``labels`` (T5 shifts them right itself)."""
    model = hf_t5()
    if model is None:
        return None
    source, _ = token_batch(vocab=T5_VOCAB, seq=12, seed=8)
    labels, _ = token_batch(vocab=T5_VOCAB, seq=8, seed=9)
    return {
        "model": model,
        "kwargs": {"input_ids": source, "attention_mask": torch.ones_like(source), "labels": labels},
    }


def example_hf_vit() -> dict | None:
    model = hf_vit()
    if model is None:
        return None
    pixels = torch.randn(BATCH, 3, 16, 16, generator=_gen(10))
    return {"model": model, "kwargs": {"pixel_values": pixels, "labels": torch.arange(BATCH) % 3}}


def example_siamese() -> dict:
    """Pairs of 28x28 images and a float label per pair (1: same class), BCE on the sigmoid output."""
    g = _gen(11)
    first, second = torch.randn(BATCH, 1, 28, 28, generator=g), torch.randn(BATCH, 1, 28, 28, generator=g)
    same = torch.tensor([1.0, 0.0] * (BATCH // 2)).unsqueeze(1)  # (B, 1), as the sigmoid output
    return {"model": SiameseNetwork(), "inputs": (first, second), "targets": same, "loss": F.binary_cross_entropy}
