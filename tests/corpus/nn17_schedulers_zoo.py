"""A tour of lr schedulers: LambdaLR, MultiStepLR, ExponentialLR, LinearLR warmup, SequentialLR,
CyclicLR, CosineAnnealingWarmRestarts, PolynomialLR and ChainedScheduler."""
import torch
from torch.optim import SGD
from torch.optim.lr_scheduler import (ChainedScheduler, ConstantLR, CosineAnnealingLR,
                                      CosineAnnealingWarmRestarts, CyclicLR, ExponentialLR, LambdaLR,
                                      LinearLR, MultiStepLR, PolynomialLR, SequentialLR)

torch.manual_seed(0)


def run(make, steps=10, **opt_kw):
    p = torch.nn.Parameter(torch.zeros(1))
    opt = SGD([p], lr=0.1, **opt_kw)
    sched = make(opt)
    lrs = []
    for _ in range(steps):
        opt.step()
        lrs.append(round(sched.get_last_lr()[0], 6))
        sched.step()
    return lrs


print("LambdaLR:", run(lambda o: LambdaLR(o, lambda e: 1 / (1 + e))))
print("MultiStepLR:", run(lambda o: MultiStepLR(o, milestones=[3, 7], gamma=0.1)))
print("ExponentialLR:", run(lambda o: ExponentialLR(o, gamma=0.8)))
print("LinearLR:", run(lambda o: LinearLR(o, start_factor=0.25, total_iters=4)))
print("ConstantLR:", run(lambda o: ConstantLR(o, factor=0.5, total_iters=3)))
print("Warmup then cosine:", run(lambda o: SequentialLR(
    o, [LinearLR(o, start_factor=0.1, total_iters=3), CosineAnnealingLR(o, T_max=7)], milestones=[3])))
print("CyclicLR:", run(lambda o: CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=3), momentum=0.9))
print("WarmRestarts:", run(lambda o: CosineAnnealingWarmRestarts(o, T_0=4, T_mult=2), steps=14))
print("PolynomialLR:", run(lambda o: PolynomialLR(o, total_iters=8, power=2.0)))
print("Chained:", run(lambda o: ChainedScheduler([ConstantLR(o, factor=0.5, total_iters=2), ExponentialLR(o, gamma=0.9)])))

p = torch.nn.Parameter(torch.zeros(1))
opt = SGD([p], lr=1.0)
sched = MultiStepLR(opt, milestones=[2], gamma=0.5)
for _ in range(3):
    opt.step()
    sched.step()
print("state_dict:", {k: v for k, v in sched.state_dict().items() if k in ("milestones", "gamma", "last_epoch", "_last_lr")})
