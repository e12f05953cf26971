"""Newton's method with autograd: gradient and Hessian of the Rosenbrock function."""
import torch

torch.manual_seed(0)


def rosenbrock(p):
    x, y = p[0], p[1]
    return (1 - x) ** 2 + 100 * (y - x ** 2) ** 2


p = torch.tensor([-1.2, 1.0], dtype=torch.float64, requires_grad=True)
for it in range(8):
    loss = rosenbrock(p)
    (g,) = torch.autograd.grad(loss, p, create_graph=True)
    H = torch.stack([torch.autograd.grad(g[i], p, retain_graph=True)[0] for i in range(2)])
    with torch.no_grad():
        step = torch.linalg.solve(H, g)
        p -= step
    print(f"iter {it}: loss={loss.item():.6e} |grad|={g.norm().item():.4e} p={[round(v, 6) for v in p.tolist()]}")

# gradient descent with a closure-free manual update
q = torch.tensor([0.0, 0.0], requires_grad=True)
lr = 1e-3
for it in range(200):
    loss = rosenbrock(q)
    loss.backward()
    with torch.no_grad():
        q -= lr * q.grad
    q.grad.zero_()
print("gradient descent after 200 steps:", [round(v, 4) for v in q.tolist()], round(rosenbrock(q).item(), 5))
