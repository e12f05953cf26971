"""Debugging NaNs: torch.autograd.detect_anomaly names the backward function that produced NaN,
set_detect_anomaly, and isnan/isfinite checks in a training loop."""
import warnings

import torch

torch.manual_seed(0)
warnings.simplefilter("ignore")
x = torch.tensor([4.0, 0.0, 1.0], requires_grad=True)
y = torch.sqrt(x)  # d/dx sqrt at 0 is inf
loss = (y * 0).sum()
loss.backward()
print("grad without anomaly mode:", x.grad)
print("has nan:", torch.isnan(x.grad).any().item(), "finite mask:", torch.isfinite(x.grad).tolist())

x.grad = None
try:
    with torch.autograd.detect_anomaly():
        y = torch.sqrt(x)
        (y * 0).sum().backward()
except RuntimeError as e:
    msg = str(e)
    print("anomaly mode raised:", msg.startswith("Function 'SqrtBackward0' returned nan values in its 0th output"))

w = torch.tensor([1.0, -1.0], requires_grad=True)
opt = torch.optim.SGD([w], lr=0.1)
for step in range(3):
    opt.zero_grad()
    loss = torch.log(w).sum()  # log of a negative number
    if not torch.isfinite(loss):
        print(f"step {step}: non-finite loss {loss.item()}, skipping")
        continue
    loss.backward()
    opt.step()
print("nan_to_num:", torch.nan_to_num(torch.tensor([float("nan"), float("inf"), -float("inf"), 1.0]), nan=0.0, posinf=9.0, neginf=-9.0))
print("anomaly mode was enabled inside the block only:", torch.is_anomaly_enabled())
torch.autograd.set_detect_anomaly(True)
print("set_detect_anomaly:", torch.is_anomaly_enabled())
torch.autograd.set_detect_anomaly(False)
