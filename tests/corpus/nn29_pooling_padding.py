"""Pooling and padding: MaxPool2d with return_indices and MaxUnpool2d, AvgPool with padding and
ceil_mode, adaptive pools, F.pad modes, and gradients through max pooling."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
x = torch.arange(1.0, 26.0).reshape(1, 1, 5, 5)
mp = nn.MaxPool2d(2, stride=2, return_indices=True)
out, idx = mp(x)
print("maxpool:", out.squeeze(), "indices:", idx.squeeze())
print("unpool:\n", nn.MaxUnpool2d(2, stride=2)(out, idx, output_size=x.shape).squeeze())
print("ceil_mode:", nn.MaxPool2d(2, ceil_mode=True)(x).shape)
print("avgpool padding:", nn.AvgPool2d(3, stride=2, padding=1)(x).squeeze())
print("avgpool count_include_pad=False:", nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=False)(x).squeeze())
print("adaptive avg 2x2:", nn.AdaptiveAvgPool2d(2)(x).squeeze())
print("adaptive max 3x3:", nn.AdaptiveMaxPool2d(3)(x).squeeze())
seq = torch.tensor([[[1.0, 3.0, 2.0, 5.0, 4.0, 0.0, 6.0]]])
print("maxpool1d:", F.max_pool1d(seq, 2), "avgpool1d:", F.avg_pool1d(seq, 3, stride=2))
print("adaptive avg 1d:", F.adaptive_avg_pool1d(seq, 3))
small = torch.arange(1.0, 7.0).reshape(1, 1, 2, 3)
print("pad constant:", F.pad(small, (1, 1, 0, 1), value=-1.0).squeeze())
print("pad reflect:", F.pad(small, (2, 2, 1, 1), mode="reflect").squeeze())
print("pad replicate:", F.pad(small, (1, 1, 1, 1), mode="replicate").squeeze())
print("pad circular:", F.pad(small, (1, 1, 0, 0), mode="circular").squeeze())
print("ZeroPad2d:", nn.ZeroPad2d((1, 0, 0, 1))(small).squeeze())
g = torch.tensor([[[[1.0, 5.0, 2.0, 2.0], [3.0, 4.0, 2.0, 1.0], [0.0, 0.0, 9.0, 9.0], [1.0, 1.0, 1.0, 1.0]]]], requires_grad=True)
F.max_pool2d(g, 2).sum().backward()
print("maxpool grad routes to the max:\n", g.grad.squeeze())
