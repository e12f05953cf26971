"""Linear regression with nn.Linear, MSELoss and SGD on synthetic data."""
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)
rng = np.random.default_rng(0)
X = torch.tensor(rng.uniform(-1, 1, size=(100, 3)), dtype=torch.float32)
true_w = torch.tensor([[2.0, -3.0, 0.5]])
y = X @ true_w.T + 1.0 + 0.05 * torch.tensor(rng.normal(size=(100, 1)), dtype=torch.float32)

model = nn.Linear(3, 1)
with torch.no_grad():
    model.weight.zero_()
    model.bias.zero_()
criterion = nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

for epoch in range(100):
    optimizer.zero_grad()
    pred = model(X)
    loss = criterion(pred, y)
    loss.backward()
    optimizer.step()
    if epoch % 10 == 0 or epoch == 99:
        print(f"epoch {epoch:3d} loss {loss.item():.6f}")

print("weight:", model.weight.data)
print("bias:", model.bias.data)
print("learned close to truth:", torch.allclose(model.weight, true_w, atol=0.1))
with torch.no_grad():
    print("prediction for [1, 1, 1]:", model(torch.ones(1, 3)).item())
