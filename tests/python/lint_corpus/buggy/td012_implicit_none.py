# expect: TD012@14
"""Seed 004: a helper returns an embedding on two branches and None on the third."""

import torch

EMBEDDING_DIM = 16
pre_trained = {"watercolor": torch.randn(EMBEDDING_DIM)}


def encode_text(description):
    return torch.randn(EMBEDDING_DIM) * len(description)


def get_style_embedding(prompt_metadata):
    if prompt_metadata.get("custom_style_description"):
        generated_embedding = encode_text(prompt_metadata["custom_style_description"])
        return generated_embedding
    elif "pre_defined_style_id" in prompt_metadata:
        return pre_trained.get(prompt_metadata["pre_defined_style_id"])


style_emb = get_style_embedding({"style": "unknown"})
print(style_emb.unsqueeze(0).shape)
