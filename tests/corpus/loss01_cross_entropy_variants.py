"""CrossEntropyLoss variants: label smoothing, class weights, ignore_index, reduction='none',
probability targets, NLLLoss on log_softmax, and K-dimensional inputs."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
logits = torch.tensor([[2.0, 0.5, -1.0], [0.1, 0.2, 0.3], [-0.5, 2.5, 0.0], [1.0, 1.0, 1.0]], requires_grad=True)
target = torch.tensor([0, 2, 1, 1])

print("plain:", nn.CrossEntropyLoss()(logits, target).item())
print("label_smoothing=0.1:", nn.CrossEntropyLoss(label_smoothing=0.1)(logits, target).item())
w = torch.tensor([1.0, 2.0, 0.5])
print("class weights:", nn.CrossEntropyLoss(weight=w)(logits, target).item())
print("weights + smoothing:", F.cross_entropy(logits, target, weight=w, label_smoothing=0.2).item())
print("ignore_index:", nn.CrossEntropyLoss(ignore_index=1)(logits, target).item())
print("reduction none:", nn.CrossEntropyLoss(reduction="none")(logits, target))
print("reduction sum:", F.cross_entropy(logits, target, reduction="sum").item())
soft = torch.tensor([[0.7, 0.2, 0.1], [0.0, 0.0, 1.0], [0.1, 0.8, 0.1], [0.3, 0.3, 0.4]])
print("probability targets:", F.cross_entropy(logits, soft).item())
print("NLL of log_softmax equals CE:", torch.allclose(F.nll_loss(F.log_softmax(logits, 1), target), F.cross_entropy(logits, target)))

loss = nn.CrossEntropyLoss(label_smoothing=0.1)(logits, target)
loss.backward()
print("grad with smoothing:\n", logits.grad)
print("grad rows sum to zero:", logits.grad.sum(1).abs().max().item() < 1e-6)

seg_logits = torch.arange(2 * 3 * 2 * 2, dtype=torch.float32).reshape(2, 3, 2, 2).sin()
seg_target = torch.tensor([[[0, 1], [2, 1]], [[1, 1], [0, 2]]])
print("segmentation (N,C,H,W):", F.cross_entropy(seg_logits, seg_target).item())
seq_target = torch.tensor([[0, 1, -100], [2, -100, -100]])
print("sequence with padding -100:", F.cross_entropy(torch.ones(2, 3, 3).cumsum(1), seq_target).item())
print("binary via 2 classes == BCE with logit difference:",
      torch.allclose(F.cross_entropy(torch.tensor([[0.0, 1.3]]), torch.tensor([1])),
                     F.binary_cross_entropy_with_logits(torch.tensor([1.3]), torch.tensor([1.0]))))
