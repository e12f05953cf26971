"""Tensor hooks, retain_grad, and module forward / forward-pre / full backward hooks."""
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)

x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
seen = []
h = x.register_hook(lambda g: seen.append(g.clone()))
y = x * 2
y.retain_grad()
y.register_hook(lambda g: g * 10)  # scale the gradient flowing back through y
loss = (y ** 2).sum()
loss.backward()
print("y.grad (retained):", y.grad)
print("x.grad (scaled by hook):", x.grad)
print("hook saw:", seen[0])
h.remove()

# module hooks
model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
rng = np.random.default_rng(0)
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.tensor(rng.normal(0, 0.5, tuple(p.shape)), dtype=torch.float32))

activations = {}


def save_activation(name):
    def hook(module, inputs, output):
        activations[name] = output.detach()
    return hook


def pre_hook(module, inputs):
    print("pre-hook input shape:", tuple(inputs[0].shape))
    return (inputs[0] * 2,)


grads = {}


def backward_hook(module, grad_input, grad_output):
    grads["out"] = grad_output[0].detach()
    grads["in"] = grad_input[0].detach()


handles = [model[0].register_forward_hook(save_activation("fc1")),
           model[2].register_forward_hook(save_activation("fc2")),
           model[0].register_forward_pre_hook(pre_hook),
           model[2].register_full_backward_hook(backward_hook)]
inp = torch.tensor([[0.1, -0.2, 0.3], [0.5, 0.4, -0.6]])
out = model(inp)
out.sum().backward()
print("fc1 activation:", activations["fc1"])
print("fc2 activation:", activations["fc2"])
print("grad_output of fc2:", grads["out"])
print("grad_input of fc2:", grads["in"])
for hd in handles:
    hd.remove()
out2 = model(inp)
print("after removing hooks, output changes:", not torch.allclose(out, out2))
print("num forward hooks left:", len(model[0]._forward_hooks))
