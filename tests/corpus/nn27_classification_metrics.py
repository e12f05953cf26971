"""Evaluation metrics written with tensor ops: accuracy via argmax, top-k accuracy, a confusion
matrix via bincount, per-class precision / recall / F1 and macro averages, ROC-AUC by ranking."""
import numpy as np
import torch
import torch.nn.functional as F

torch.manual_seed(0)
rng = np.random.default_rng(0)
num_classes = 4
targets = torch.tensor(rng.integers(0, num_classes, 40))
logits = torch.tensor(rng.normal(size=(40, num_classes)), dtype=torch.float32)
logits[torch.arange(40), targets] += 1.2  # a decent but imperfect classifier

preds = logits.argmax(dim=1)
print("accuracy:", (preds == targets).float().mean().item())
top2 = logits.topk(2, dim=1).indices
print("top-2 accuracy:", (top2 == targets.unsqueeze(1)).any(dim=1).float().mean().item())
cm = torch.bincount(targets * num_classes + preds, minlength=num_classes ** 2).reshape(num_classes, num_classes)
print("confusion matrix:\n", cm)
tp = cm.diag().float()
precision = tp / cm.sum(0).clamp(min=1)
recall = tp / cm.sum(1).clamp(min=1)
f1 = 2 * precision * recall / (precision + recall).clamp(min=1e-12)
print("precision:", precision)
print("recall:", recall)
print("f1:", f1, "macro f1:", round(f1.mean().item(), 6))
print("support:", cm.sum(1).tolist())
probs = F.softmax(logits, dim=1)
print("mean max prob (confidence):", round(probs.max(1).values.mean().item(), 6))
nll = F.nll_loss(probs.log(), targets)
print("log loss:", round(nll.item(), 6))

# binary ROC-AUC for class 0 vs rest via the rank statistic
scores = probs[:, 0]
pos = targets == 0
order = scores.argsort()
ranks = torch.empty_like(scores)
ranks[order] = torch.arange(1, 41, dtype=torch.float32)
n_pos, n_neg = pos.sum().item(), (~pos).sum().item()
auc = (ranks[pos].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)
print("AUC class 0:", round(auc.item(), 6))
one_hot = F.one_hot(targets, num_classes)
print("one_hot:", one_hot[:3].tolist(), one_hot.dtype)
print("brier score:", round(((probs - one_hot) ** 2).sum(1).mean().item(), 6))
