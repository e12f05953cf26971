"""Binary losses: BCELoss on sigmoid outputs, BCEWithLogitsLoss with pos_weight and weight,
multi-label targets, numerical stability with large logits."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
logits = torch.tensor([[1.5, -0.3, 0.0], [-2.0, 0.7, 3.0]], requires_grad=True)
targets = torch.tensor([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0]])

bce = nn.BCELoss()(torch.sigmoid(logits), targets)
bcel = nn.BCEWithLogitsLoss()(logits, targets)
print("BCE(sigmoid) vs BCEWithLogits:", round(bce.item(), 6), round(bcel.item(), 6))
pw = torch.tensor([3.0, 1.0, 0.5])
print("pos_weight per class:", nn.BCEWithLogitsLoss(pos_weight=pw)(logits, targets).item())
print("weight (per element):", F.binary_cross_entropy_with_logits(logits, targets, weight=torch.tensor([1.0, 2.0, 0.0])).item())
print("reduction none:", nn.BCEWithLogitsLoss(reduction="none", pos_weight=pw)(logits, targets))
loss = nn.BCEWithLogitsLoss(pos_weight=pw)(logits, targets)
loss.backward()
print("grad:", logits.grad)
big = torch.tensor([100.0, -100.0])
print("stable for large logits:", F.binary_cross_entropy_with_logits(big, torch.tensor([0.0, 1.0])).item())
print("BCE clamps log at -100:", F.binary_cross_entropy(torch.tensor([0.0, 1.0]), torch.tensor([1.0, 0.0])).item())
print("soft labels:", F.binary_cross_entropy_with_logits(torch.tensor([0.2, -0.4]), torch.tensor([0.9, 0.1])).item())

# multi-label accuracy: threshold at 0.5 probability
with torch.no_grad():
    preds = (torch.sigmoid(logits) > 0.5).float()
print("exact-match ratio:", (preds == targets).all(dim=1).float().mean().item(), "hamming:", (preds != targets).float().mean().item())
print("soft margin:", nn.SoftMarginLoss()(torch.tensor([0.5, -1.0]), torch.tensor([1.0, -1.0])).item())
print("multilabel soft margin:", nn.MultiLabelSoftMarginLoss()(logits.detach(), targets).item())
