"""The torch door: an nn.Module trained with SGD on a DataLoader."""
import fgrad.torch as torch
import fgrad.torch.nn as nn
import fgrad.torch.nn.functional as F
from fgrad.torch.utils.data import DataLoader, TensorDataset


class MLP(nn.Module):
    def __init__(self, n_in: int, n_hidden: int, n_out: int) -> None:
        super().__init__()
        self.fc1 = nn.Linear(n_in, n_hidden)
        self.fc2 = nn.Linear(n_hidden, n_out)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(F.relu(self.fc1(x)))


torch.manual_seed(0)
inputs = torch.randn(64, 8)
targets = torch.randint(0, 3, (64,))
loader = DataLoader(TensorDataset(inputs, targets), batch_size=16, shuffle=True)
model = MLP(8, 16, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
loss_fn = nn.CrossEntropyLoss()
for epoch in range(2):
    for xb, yb in loader:
        optimizer.zero_grad()
        loss = loss_fn(model(xb), yb)
        loss.backward()
        optimizer.step()
model.eval()
with torch.no_grad():
    accuracy = (model(inputs).argmax(dim=1) == targets).float().mean().item()
print(f"accuracy {accuracy:.2f}", model.fc1.weight.grad is not None)
torch.save(model.state_dict(), "/dev/null")
