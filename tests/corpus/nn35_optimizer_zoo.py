"""The same small problem under many optimisers: Adagrad, Adadelta, Adamax, NAdam, RAdam, Adam with
amsgrad, SGD with dampening, and maximize=True; final loss and optimiser reprs."""
import torch
import torch.nn as nn

torch.manual_seed(0)
X = torch.tensor([[0.5, -1.0], [1.5, 2.0], [-0.3, 0.8], [2.0, -0.5], [0.0, 1.0], [-1.0, -1.0]])
y = torch.tensor([[1.0], [3.0], [0.2], [1.2], [0.9], [-1.5]])


def train(make_opt, steps=25):
    model = nn.Linear(2, 1)
    with torch.no_grad():
        model.weight.copy_(torch.tensor([[0.1, -0.2]]))
        model.bias.fill_(0.05)
    opt = make_opt(model.parameters())
    for _ in range(steps):
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(X), y)
        loss.backward()
        opt.step()
    return loss.item(), model.weight.detach().squeeze().tolist(), opt


for name, make in [
    ("Adagrad", lambda p: torch.optim.Adagrad(p, lr=0.3, lr_decay=0.01)),
    ("Adadelta", lambda p: torch.optim.Adadelta(p, lr=1.0)),
    ("Adamax", lambda p: torch.optim.Adamax(p, lr=0.1)),
    ("NAdam", lambda p: torch.optim.NAdam(p, lr=0.1)),
    ("RAdam", lambda p: torch.optim.RAdam(p, lr=0.1)),
    ("Adam amsgrad", lambda p: torch.optim.Adam(p, lr=0.1, amsgrad=True)),
    ("SGD dampening", lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, dampening=0.5)),
    ("RMSprop centered", lambda p: torch.optim.RMSprop(p, lr=0.01, centered=True)),
]:
    loss, w, opt = train(make)
    print(f"{name:16s} loss {loss:.6f} weight {[round(v, 5) for v in w]}")
print(opt)

# maximize=True ascends: maximise the negative loss
loss, w, _ = train(lambda p: torch.optim.SGD(p, lr=0.05, maximize=True), steps=1)
m = nn.Linear(2, 1)
with torch.no_grad():
    m.weight.copy_(torch.tensor([[0.1, -0.2]]))
    m.bias.fill_(0.05)
opt = torch.optim.Adam(m.parameters(), lr=0.1, maximize=True)
for _ in range(25):
    opt.zero_grad()
    (-nn.functional.mse_loss(m(X), y)).backward()
    opt.step()
print("maximize Adam reaches loss:", round(nn.functional.mse_loss(m(X), y).item(), 6))
