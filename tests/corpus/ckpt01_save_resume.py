"""Checkpointing: train, save model + optimizer + scheduler + epoch to a temp dir, rebuild
everything, load, resume, and match an uninterrupted run exactly."""
import os
import tempfile

import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)
rng = np.random.default_rng(0)
X = torch.tensor(rng.normal(size=(64, 5)), dtype=torch.float32)
y = torch.tensor(rng.integers(0, 3, 64))
init = [rng.normal(0, 0.4, s) for s in [(16, 5), (16,), (3, 16), (3,)]]


def build():
    model = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 3))
    with torch.no_grad():
        for p, a in zip(model.parameters(), init):
            p.copy_(torch.from_numpy(a).float())
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.5)
    return model, opt, sched


def train_epoch(model, opt, sched):
    for i in range(0, 64, 16):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(X[i:i + 16]), y[i:i + 16])
        loss.backward()
        opt.step()
    sched.step()
    return loss.item()


ref_model, ref_opt, ref_sched = build()
ref_losses = [train_epoch(ref_model, ref_opt, ref_sched) for _ in range(8)]

model, opt, sched = build()
losses = [train_epoch(model, opt, sched) for _ in range(4)]
with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "checkpoint.pt")
    torch.save({"epoch": 4, "model_state_dict": model.state_dict(), "optimizer_state_dict": opt.state_dict(),
                "scheduler_state_dict": sched.state_dict(), "loss": losses[-1]}, path)
    print("checkpoint written:", os.path.exists(path))
    del model, opt, sched
    model, opt, sched = build()
    ckpt = torch.load(path)
    model.load_state_dict(ckpt["model_state_dict"])
    opt.load_state_dict(ckpt["optimizer_state_dict"])
    sched.load_state_dict(ckpt["scheduler_state_dict"])
    start = ckpt["epoch"]
    print("resuming from epoch", start, "last loss", round(ckpt["loss"], 6), "lr", sched.get_last_lr())
model.train()
losses += [train_epoch(model, opt, sched) for _ in range(start, 8)]
print("uninterrupted:", [round(v, 6) for v in ref_losses])
print("resumed:      ", [round(v, 6) for v in losses])
print("identical parameters:", all(torch.equal(a, b) for a, b in zip(ref_model.parameters(), model.parameters())))
print("optimizer step count:", opt.state_dict()["state"][0]["step"])
