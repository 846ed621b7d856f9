"""Healthy: a graph convolutional network on a sparse, row-normalised adjacency.

Each epoch trains on the labelled nodes, steps, then runs the whole graph again in eval mode (no
dropout) for the validation loss, with gradients on; a final ``test()`` does the same. The
layers multiply by the adjacency with ``torch.spmm``; the model returns ``log_softmax`` for
``nll_loss``.
"""

import math

import torch
import torch.nn.functional as F
from torch import nn


class GraphConvolution(nn.Module):
    def __init__(self, n_in: int, n_out: int) -> None:
        super().__init__()
        bound = 1.0 / math.sqrt(n_out)
        self.weight = nn.Parameter(torch.empty(n_in, n_out).uniform_(-bound, bound))
        self.bias = nn.Parameter(torch.empty(n_out).uniform_(-bound, bound))

    def forward(self, features, adj):
        return torch.spmm(adj, features @ self.weight) + self.bias


class GCN(nn.Module):
    def __init__(self, n_in: int, hidden: int, classes: int, dropout: float = 0.5) -> None:
        super().__init__()
        self.gc1, self.gc2, self.dropout = GraphConvolution(n_in, hidden), GraphConvolution(hidden, classes), dropout

    def forward(self, features, adj):
        h = F.dropout(F.relu(self.gc1(features, adj)), self.dropout, training=self.training)
        return F.log_softmax(self.gc2(h, adj), dim=1)


torch.manual_seed(2)
nodes, classes = 90, 3
labels = torch.arange(nodes) % classes
features = (torch.rand(nodes, 30) < 0.1).float()
features[torch.arange(nodes), labels * 10] = 1.0
features = features / features.sum(1, keepdim=True)
src = torch.randint(0, nodes, (400,))
dst = (src + classes * torch.randint(1, 6, (400,))) % nodes  # edges within a class, mostly
edges = torch.cat([torch.stack([src, dst]), torch.stack([dst, src]), torch.arange(nodes).repeat(2, 1)], 1)
adj = torch.sparse_coo_tensor(edges, torch.ones(edges.shape[1]), (nodes, nodes), check_invariants=True).coalesce()
adj = torch.sparse_coo_tensor(adj.indices(), torch.ones_like(adj.values()), (nodes, nodes)).coalesce()
degree = torch.sparse.sum(adj, 1).to_dense()
adj = torch.sparse_coo_tensor(adj.indices(), adj.values() / degree[adj.indices()[0]], (nodes, nodes)).coalesce()
train_idx, val_idx, test_idx = torch.arange(0, 45), torch.arange(45, 70), torch.arange(70, 90)
model = GCN(30, 16, classes)
optimizer = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
for _ in range(30):
    model.train()
    optimizer.zero_grad()
    output = model(features, adj)
    loss_train = F.nll_loss(output[train_idx], labels[train_idx])
    loss_train.backward()
    optimizer.step()
    model.eval()
    output = model(features, adj)
    loss_val = F.nll_loss(output[val_idx], labels[val_idx])
model.eval()
output = model(features, adj)
accuracy = (output[test_idx].argmax(1) == labels[test_idx]).float().mean()
print(f"validation loss {loss_val.item():.3f}, test accuracy {accuracy.item():.2f}")
