"""Logistic regression on sklearn's breast cancer data with BCEWithLogitsLoss(pos_weight) and Adam."""
import numpy as np
import torch
import torch.nn as nn
from sklearn.datasets import load_breast_cancer

torch.manual_seed(0)
data = load_breast_cancer()
X = data.data.astype(np.float32)
X = (X - X.mean(0)) / X.std(0)
y = data.target.astype(np.float32)
X_train, y_train = torch.from_numpy(X[:400]), torch.from_numpy(y[:400]).unsqueeze(1)
X_test, y_test = torch.from_numpy(X[400:]), torch.from_numpy(y[400:]).unsqueeze(1)
print("train/test:", X_train.shape, X_test.shape, "positives:", int(y_train.sum().item()))

model = nn.Linear(30, 1)
with torch.no_grad():
    model.weight.copy_(torch.from_numpy(np.random.default_rng(0).normal(0, 0.01, (1, 30)).astype(np.float32)))
    model.bias.zero_()
neg, pos = (y_train == 0).sum(), (y_train == 1).sum()
criterion = nn.BCEWithLogitsLoss(pos_weight=neg / pos)
print("pos_weight:", round((neg / pos).item(), 5))
optimizer = torch.optim.Adam(model.parameters(), lr=0.05)

for epoch in range(60):
    optimizer.zero_grad()
    loss = criterion(model(X_train), y_train)
    loss.backward()
    optimizer.step()
    if epoch % 10 == 9:
        print(f"epoch {epoch + 1} loss {loss.item():.5f}")

model.eval()
with torch.no_grad():
    logits = model(X_test)
    probs = torch.sigmoid(logits)
    preds = (probs > 0.5).float()
    acc = (preds == y_test).float().mean().item()
    tp = ((preds == 1) & (y_test == 1)).sum().item()
    fp = ((preds == 1) & (y_test == 0)).sum().item()
    fn = ((preds == 0) & (y_test == 1)).sum().item()
print(f"test accuracy {acc:.4f} precision {tp / (tp + fp):.4f} recall {tp / (tp + fn):.4f}")
print("first probabilities:", probs[:5].squeeze())
