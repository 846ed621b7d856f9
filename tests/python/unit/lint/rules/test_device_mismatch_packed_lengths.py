"""TD014 and the lengths of a packed sequence: ``pack_padded_sequence(x, lengths)`` wants its
lengths on the CPU (it refuses a CUDA tensor), so a text classifier whose ``forward`` packs its
input is right to be given lengths built with ``torch.tensor(...)`` and never moved. The token
ids beside them still have to be moved; a forward that moves its lengths back with ``.cpu()``
takes them from either device."""

from __future__ import annotations

from support.lint import hits

SCRIPT = """
import torch
from torch import nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class Reader(nn.Module):
    def __init__(self, vocab, width):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.rnn = nn.GRU(width, width, batch_first=True)
        self.out = nn.Linear(width, 2)

    def forward(self, tokens, sizes):
        vectors = self.embed(tokens)
        packed = nn.utils.rnn.pack_padded_sequence(vectors, {sizes}, batch_first=True, enforce_sorted=False)
        _, last = self.rnn(packed)
        return self.out(last[-1])


reader = Reader(1000, 32)
reader = reader.to(device)


def classify(words, vocab):
    ids = [vocab[w] for w in words]
    sizes = torch.tensor([len(ids)])
    tokens = torch.tensor([ids]){move}
    return reader(tokens, sizes).argmax(-1).item()
"""


def td014(sizes: str, move: str):
    return hits(SCRIPT.format(sizes=sizes, move=move), "TD014")


def test_lengths_left_on_the_cpu_for_packing_are_not_a_mismatch():
    assert td014("sizes", ".to(device)") == []


def test_lengths_moved_back_to_the_cpu_inside_forward_are_not_a_mismatch_either():
    assert td014("sizes.cpu()", ".to(device)") == []
    assert td014('lengths=sizes.to("cpu")', ".to(device)") == []


def test_the_token_ids_beside_the_lengths_still_have_to_be_moved():
    assert td014("sizes", "") == [("TD014", 29)]
