"""Indexing: slicing, boolean masks, fancy indexing, gather/scatter, where, masked_fill, nonzero."""
import torch

torch.manual_seed(0)

x = torch.arange(20, dtype=torch.float32).reshape(4, 5)
print(x[1], x[:, 2], x[1:3, ::2], x[-1, -2:])
print("ellipsis:", torch.zeros(2, 3, 4)[..., 0].shape, "None:", x[None].shape)
print("bool mask:", x[x % 3 == 0])
print("fancy rows:", x[[0, 2, 3]])
print("fancy pairs:", x[torch.tensor([0, 1, 2]), torch.tensor([4, 3, 2])])
idx = torch.tensor([[0, 1], [2, 0], [4, 4], [1, 3]])
print("gather:", torch.gather(x, 1, idx))
print("index_select:", torch.index_select(x, 0, torch.tensor([3, 0])))
s = torch.zeros(3, 5).scatter_(1, torch.tensor([[0, 1], [2, 3], [4, 0]]), 1.0)
print("scatter_:", s)
print("scatter_add_:", torch.zeros(5).scatter_add_(0, torch.tensor([0, 1, 1, 4, 4, 4]), torch.ones(6)))
print("where:", torch.where(x > 10, x, torch.zeros_like(x))[2])
print("masked_fill:", x.masked_fill(x < 5, -1.0)[0])
print("nonzero:", torch.nonzero(torch.tensor([0, 3, 0, 2])).flatten(), torch.tensor([[0, 1], [1, 0]]).nonzero())
print("argwhere:", torch.argwhere(x[0] > 2))
y = x.clone()
y[y > 15] = 0
y[0, :] = torch.tensor([9.0, 8.0, 7.0, 6.0, 5.0])
y[:, 0] += 100
print("assignments:\n", y)
one_hot = torch.zeros(4, 3)
one_hot[torch.arange(4), torch.tensor([2, 0, 1, 2])] = 1
print("one-hot by indexing:\n", one_hot)
print("index_add_:", torch.zeros(3).index_add_(0, torch.tensor([0, 2, 0]), torch.tensor([1.0, 2.0, 3.0])))
print("take:", torch.take(x, torch.tensor([0, 7, 19])))
print("unique:", torch.unique(torch.tensor([3, 1, 3, 2, 1]), return_counts=True))
print("topk:", torch.topk(torch.tensor([1.0, 5.0, 3.0, 4.0]), 2))
print("sort:", torch.sort(torch.tensor([3.0, 1.0, 2.0]), descending=True))
print("tril:", torch.tril(torch.ones(3, 3)))
# gradient through fancy indexing and gather
w = torch.ones(4, 5, requires_grad=True)
(w[[0, 0, 2]] * 2).sum().backward()
print("grad of repeated fancy index:\n", w.grad)
