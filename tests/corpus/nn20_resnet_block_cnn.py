"""A residual CNN with BatchNorm2d, a strided shortcut, AdaptiveAvgPool2d and a training step."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut = nn.Sequential()
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride=stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.shortcut(x))


class TinyResNet(nn.Module):
    def __init__(self, num_classes=4):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(inplace=True))
        self.layer1 = BasicBlock(8, 8)
        self.layer2 = BasicBlock(8, 16, stride=2)
        self.pool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(16, num_classes)

    def forward(self, x):
        x = self.layer2(self.layer1(self.stem(x)))
        return self.fc(torch.flatten(self.pool(x), 1))


net = TinyResNet()
rng = np.random.default_rng(0)
with torch.no_grad():
    for name, p in net.named_parameters():
        if p.dim() > 1:
            fan_in = int(np.prod(p.shape[1:]))
            p.copy_(torch.tensor(rng.normal(0, np.sqrt(2.0 / fan_in), tuple(p.shape)), dtype=torch.float32))
    net.fc.bias.zero_()  # BatchNorm's weight and bias start at ones and zeros already
x = torch.tensor(rng.normal(size=(8, 3, 12, 12)), dtype=torch.float32)
y = torch.tensor([0, 1, 2, 3, 0, 1, 2, 3])
print("output shape:", net(x).shape)
print("shapes through the net:", net.stem(x).shape, net.layer2(net.layer1(net.stem(x))).shape)
opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4)
for step in range(6):
    net.train()
    opt.zero_grad()
    loss = F.cross_entropy(net(x), y)
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.5f}")
net.eval()
with torch.no_grad():
    logits = net(x)
print("eval logits row 0:", logits[0])
print("running var of stem BN:", net.stem[1].running_var[:4])
print("num params:", sum(p.numel() for p in net.parameters()))
