"""Embedding losses: CosineEmbeddingLoss, MarginRankingLoss, TripletMarginLoss, HingeEmbedding,
MultiMarginLoss, and cosine similarity / pairwise distance."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
a = torch.tensor([[1.0, 0.0, 1.0], [0.5, 0.5, -1.0], [0.0, 2.0, 0.0]], requires_grad=True)
p = torch.tensor([[0.9, 0.1, 1.2], [0.4, 0.6, -0.8], [1.0, 0.0, 0.0]])
n = torch.tensor([[-1.0, 0.0, 0.5], [0.5, 0.4, -1.1], [0.0, 1.5, 0.5]])

print("cosine similarity:", F.cosine_similarity(a, p, dim=1).detach())
print("pairwise distance:", F.pairwise_distance(a, p).detach())
print("cdist:", torch.cdist(a.detach(), n))
y = torch.tensor([1.0, -1.0, 1.0])
print("CosineEmbeddingLoss:", nn.CosineEmbeddingLoss(margin=0.2)(a, p, y).item())
print("MarginRankingLoss:", nn.MarginRankingLoss(margin=0.5)(a[:, 0], p[:, 0], y).item())
trip = nn.TripletMarginLoss(margin=1.0, p=2)
loss = trip(a, p, n)
loss.backward()
print("TripletMarginLoss:", loss.item())
print("anchor grad:\n", a.grad)
print("HingeEmbeddingLoss:", nn.HingeEmbeddingLoss(margin=1.0)(torch.tensor([0.3, 2.0, 0.5]), torch.tensor([1.0, -1.0, -1.0])).item())
print("normalize:", F.normalize(torch.tensor([[3.0, 4.0], [0.0, 2.0]]), dim=1))
print("MultiMarginLoss:", nn.MultiMarginLoss()(torch.tensor([[0.1, 0.8, 0.3], [1.0, -1.0, 0.5]]), torch.tensor([1, 2])).item())
