"""BatchNorm1d/2d: batch statistics in train mode, running estimates, eval mode, momentum=None."""
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)
rng = np.random.default_rng(0)

bn = nn.BatchNorm1d(3)
print(bn, "affine:", bn.weight.shape, "running_mean:", bn.running_mean)
for step in range(4):
    x = torch.tensor(rng.normal(loc=[1.0, -2.0, 5.0], scale=[1.0, 0.5, 2.0], size=(16, 3)), dtype=torch.float32)
    y = bn(x)
    print(f"step {step}: out mean {y.mean(0).abs().max().item() < 1e-5} "
          f"running_mean {[round(v, 4) for v in bn.running_mean.tolist()]} "
          f"running_var {[round(v, 4) for v in bn.running_var.tolist()]}")
print("num_batches_tracked:", bn.num_batches_tracked)
bn.eval()
z = torch.tensor([[1.0, -2.0, 5.0]])
print("eval output:", bn(z))

cumulative = nn.BatchNorm1d(2, momentum=None)
for k in range(3):
    cumulative(torch.tensor([[k * 1.0, 2.0 * k], [k + 2.0, -1.0]]))
print("cumulative average running mean:", cumulative.running_mean)

bn2 = nn.BatchNorm2d(4)
imgs = torch.tensor(rng.normal(size=(8, 4, 5, 5)), dtype=torch.float32)
out = bn2(imgs)
print("BatchNorm2d per-channel mean ~0:", out.mean(dim=(0, 2, 3)).abs().max().item() < 1e-5)
print("per-channel var ~1:", [round(v, 3) for v in out.var(dim=(0, 2, 3), unbiased=False).tolist()])
print("state_dict keys:", list(bn2.state_dict().keys()))

no_track = nn.BatchNorm1d(3, track_running_stats=False, affine=False)
print("no running stats:", no_track.running_mean, "params:", list(no_track.parameters()))
print("grad flows:", torch.autograd.grad(bn2(imgs.requires_grad_()).pow(2).sum(), imgs)[0].shape)
