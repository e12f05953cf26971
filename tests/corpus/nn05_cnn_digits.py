"""A small CNN on 8x8 digits: Conv2d, MaxPool2d, Flatten, Adam, eval accuracy and a confusion count."""
import numpy as np
import torch
import torch.nn as nn
from sklearn.datasets import load_digits
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
digits = load_digits()
images = torch.tensor(digits.images, dtype=torch.float32).unsqueeze(1) / 16.0
labels = torch.tensor(digits.target)
train = TensorDataset(images[:1000], labels[:1000])
test_x, test_y = images[1500:], labels[1500:]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 8, kernel_size=3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(8, 16, kernel_size=3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(16 * 2 * 2, 10))

    def forward(self, x):
        return self.classifier(self.features(x))


net = Net()
rng = np.random.default_rng(0)
with torch.no_grad():
    for p in net.parameters():
        fan_in = int(np.prod(p.shape[1:])) if p.dim() > 1 else p.shape[0]
        p.copy_(torch.tensor(rng.normal(0, np.sqrt(2 / fan_in), tuple(p.shape)), dtype=torch.float32))
print(net)
print("parameters:", sum(p.numel() for p in net.parameters()))
print("feature map shape:", net.features(test_x[:2]).shape)

opt = torch.optim.Adam(net.parameters(), lr=1e-2)
loader = DataLoader(train, batch_size=50, shuffle=True, generator=torch.Generator().manual_seed(1))
for epoch in range(3):
    net.train()
    losses = []
    for xb, yb in loader:
        opt.zero_grad()
        loss = nn.functional.cross_entropy(net(xb), yb)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    net.eval()
    with torch.no_grad():
        pred = net(test_x).argmax(dim=1)
    print(f"epoch {epoch} mean loss {np.mean(losses):.4f} test acc {(pred == test_y).float().mean().item():.4f}")
confusion = torch.zeros(10, 10, dtype=torch.long)
for t, p in zip(test_y.tolist(), pred.tolist()):
    confusion[t, p] += 1
print("correct per class:", confusion.diag().tolist())
