"""NumPy interop: from_numpy and .numpy() share memory, as_tensor vs tensor copies, dtype mapping,
and moving results back for plotting-style code."""
import numpy as np
import torch

torch.manual_seed(0)
a = np.array([1.0, 2.0, 3.0])
t = torch.from_numpy(a)
print("from_numpy dtype:", t.dtype)
a[0] = 10.0
print("shares memory with the array:", t)
t.mul_(2)
print("array sees in-place tensor change:", a)
c = torch.tensor(a)
a[1] = -1.0
print("torch.tensor copies:", c)
s = torch.as_tensor(a)
a[2] = 0.5
print("as_tensor shares:", s)
for arr in (np.zeros(2, dtype=np.float32), np.zeros(2, dtype=np.int32), np.zeros(2, dtype=np.int64),
            np.zeros(2, dtype=np.bool_), np.zeros(2, dtype=np.uint8), np.zeros(2, dtype=np.float16)):
    print(arr.dtype, "->", torch.from_numpy(arr).dtype)
print("python lists:", torch.tensor([1, 2]).dtype, torch.tensor([1.0, 2]).dtype, torch.tensor([True]).dtype)
x = torch.linspace(0, 1, 4, requires_grad=True)
y = x ** 2
print("numpy of a detached result:", y.detach().numpy(), y.detach().cpu().numpy().dtype)
try:
    y.numpy()
except RuntimeError as e:
    print("numpy() on a tensor that requires grad:", "requires grad" in str(e))
n = torch.ones(3).numpy()
n[0] = 5
print("tensor.numpy() result is writable:", n)
print("np functions on tensors:", np.mean(torch.tensor([1.0, 2.0, 6.0]).numpy()), float(torch.tensor(2.5)), int(torch.tensor(7)))
print("tolist nested:", torch.arange(6).reshape(2, 3).tolist())
print("mixed arithmetic with numpy scalars:", (torch.tensor([1.0, 2.0]) * np.float32(2.0)).dtype)
