"""KLDivLoss for knowledge distillation: batchmean vs mean, log_target, temperature scaling,
and a check against the closed form."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
rng = np.random.default_rng(0)
student_logits = torch.tensor(rng.normal(size=(4, 5)), dtype=torch.float32, requires_grad=True)
teacher_logits = torch.tensor(rng.normal(size=(4, 5)) * 2, dtype=torch.float32)
T = 2.0

log_p = F.log_softmax(student_logits / T, dim=1)
q = F.softmax(teacher_logits / T, dim=1)
kl_bm = nn.KLDivLoss(reduction="batchmean")(log_p, q)
kl_mean = nn.KLDivLoss(reduction="mean")(log_p, q)
kl_sum = F.kl_div(log_p, q, reduction="sum")
manual = (q * (q.log() - log_p)).sum() / 4
print("batchmean:", round(kl_bm.item(), 6), "mean:", round(kl_mean.item(), 6), "sum:", round(kl_sum.item(), 6))
print("batchmean equals the textbook KL:", torch.allclose(kl_bm, manual))
print("log_target:", torch.allclose(F.kl_div(log_p, q.log(), reduction="batchmean", log_target=True), kl_bm))
print("none shape:", F.kl_div(log_p, q, reduction="none").shape)

labels = torch.tensor([0, 3, 1, 4])
alpha = 0.7
distill = alpha * T * T * kl_bm + (1 - alpha) * F.cross_entropy(student_logits, labels)
distill.backward()
print("distillation loss:", round(distill.item(), 6))
print("student grad:\n", student_logits.grad)

# training the student towards the teacher reduces the KL
s = nn.Parameter(torch.zeros(4, 5))
opt = torch.optim.SGD([s], lr=2.0)
for step in range(30):
    loss = F.kl_div(F.log_softmax(s, 1), F.softmax(teacher_logits, 1), reduction="batchmean")
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 10 == 0:
        print(f"step {step} KL {loss.item():.6f}")
print("student probs approach teacher:", torch.allclose(F.softmax(s, 1), F.softmax(teacher_logits, 1), atol=0.05))
