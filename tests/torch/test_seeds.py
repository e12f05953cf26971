"""The code examples of the seed articles (shared/seeds/*.txt), run with `import fgrad.torch as torch`:
each must print exactly what the article shows PyTorch printing."""
import re
import warnings

import numpy as np
import pytest

import fgrad.torch as torch
from fgrad.interpreters.backward import FREED_MESSAGE

NON_LEAF_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute "
    "won't be populated during autograd.backward(). If you indeed want the .grad field to be populated "
    "for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor "
    "by mistake, make sure you access the leaf Tensor instead. See github.com/pytorch/pytorch/pull/30531 "
    "for more information.")


# --- seed 000: attributes of a Tensor ------------------------------------------------------------

def test_seed000_grad_and_grad_fn(capsys):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        x = torch.tensor(4.0, requires_grad=True)
        print("x.grad:", x.grad)
        print("x.grad_fn:", x.grad_fn)

        z = x ** 2
        print("z grad:", z.grad)
        print("z.grad_fn:", z.grad_fn)

        z.backward()
        print("x.grad:", x.grad)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "x.grad: None"
    assert lines[1] == "x.grad_fn: None"
    assert lines[2] == "z grad: None"
    assert re.fullmatch(r"z\.grad_fn: <PowBackward0 object at 0x[0-9a-fA-F]+>", lines[3])
    assert lines[4] == "x.grad: tensor(8.)"
    assert len(lines) == 5
    # exactly one warning, PyTorch's text, pointing at the line that read z.grad
    assert [str(w.message) for w in caught] == [NON_LEAF_WARNING]
    assert caught[0].category is UserWarning
    assert caught[0].filename == __file__


def test_seed000_warning_silenced_by_retain_grad():
    x = torch.tensor(4.0, requires_grad=True)
    z = x ** 2
    z.retain_grad()
    z.backward()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert repr(z.grad) == "tensor(1.)"
    assert repr(x.grad) == "tensor(8.)"


def test_seed000_float_dtype_and_devices_described_in_text():
    # "默认数据类型是32位浮点数" and "只有浮点数类型的张量才能计算梯度"
    assert torch.tensor([1.0, 2.0]).dtype == torch.float32
    assert torch.tensor([1, 2]).dtype == torch.int64
    with pytest.raises(RuntimeError, match="floating point"):
        torch.tensor([1, 2], requires_grad=True)
    t = torch.tensor([1.0])
    assert t.device.type == "cpu" and str(t.cpu().device) == "cpu"


def _training_pieces():
    nn = pytest.importorskip("fgrad.torch.nn")
    optim = pytest.importorskip("fgrad.torch.optim")
    data = pytest.importorskip("fgrad.torch.utils.data")
    for mod, names in ((nn, ("Module", "Conv2d", "MaxPool2d", "Linear", "ReLU", "CrossEntropyLoss")),
                       (optim, ("SGD",)), (data, ("DataLoader", "TensorDataset"))):
        missing = [n for n in names if not hasattr(mod, n)]
        if missing:
            pytest.skip(f"{mod.__name__} lacks {missing} (built by another part of the project)")
    return nn, optim, data


def test_seed000_model_training_loop_runs_and_learns():
    """The article's model_training(net), verbatim, on a small CNN over synthetic 12x12
    'digits' (two classes: a bright left or right half)."""
    nn, optim, data = _training_pieces()
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 2, 64)
    images = rng.random((64, 1, 12, 12)).astype(np.float32) * 0.2
    for i, lab in enumerate(labels):
        images[i, 0, :, (0 if lab == 0 else 6):(6 if lab == 0 else 12)] += 0.8
    train_loader = data.DataLoader(data.TensorDataset(torch.tensor(images), torch.tensor(labels)),
                                   batch_size=16, shuffle=True)
    num_epochs = 3

    def rightness(output, target):
        preds = output.data.max(dim=1, keepdim=True)[1]
        return preds.eq(target.data.view_as(preds)).sum(), len(target)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(1, 4, 3, padding=1)
            self.pool = nn.MaxPool2d(2)
            self.relu = nn.ReLU()
            self.fc = nn.Linear(4 * 6 * 6, 2)

        def forward(self, x):
            x = self.pool(self.relu(self.conv(x)))
            return self.fc(x.view(x.size(0), -1))

    net = Net()
    record = []

    # --- the article's function, unchanged ---
    def model_training(net):
        criterion = nn.CrossEntropyLoss() # Loss函数的定义，交叉熵
        optimizer = optim.SGD(net.parameters(), lr=0.001, momentum=0.9) # 优化器定义

        record = [] # 记录准确率等数值的容器
        weights = [] # 每若干步就记录一次卷积核

        # 开始训练循环
        for epoch in range(num_epochs):

            train_rights = [] # 记录训练集上准确率的容器

            for batch_idx, (data, target) in enumerate(train_loader):  # 对容器中的每一个批进行循环
                data, target = data.clone().requires_grad_(True), target.clone().detach()

                net.train()

                output = net(data) # 神经网络完成一次前馈的计算过程，得到预测输出output
                loss = criterion(output, target) # 将output与标签target比较，计算误差
                optimizer.zero_grad() # 清空梯度
                loss.backward() # 反向传播
                optimizer.step() # 一步随机梯度下降算法
                right = rightness(output, target) # 计算准确率所需数值，返回数值为（正确样例数，总样本数）
                train_rights.append(right) # 将计算结果装到列表容器train_rights中
            record.append(train_rights)
        return record

    before = [p.detach().clone() for p in net.parameters()]
    record = model_training(net)
    assert len(record) == num_epochs and all(len(r) == 4 for r in record)
    assert all(not torch.equal(a, p) for a, p in zip(before, net.parameters()))  # SGD moved every parameter
    for p in net.parameters():
        assert p.grad is not None and p.grad.shape == p.shape
    # data.clone().requires_grad_(True) is a leaf, so the input gradient exists too
    first = next(iter(train_loader))[0].clone().requires_grad_(True)
    net(first).sum().backward()
    assert first.grad is not None and first.grad.shape == first.shape


# --- seed 002: autograd.grad / backward / retain_graph / accumulation ----------------------------

def test_seed002_autograd_grad_second_order(capsys):
    x = torch.tensor([3.], requires_grad=True)
    y = torch.pow(x, 2)     # y = x**2

    grad_1 = torch.autograd.grad(y, x, create_graph=True)   # grad_1 = dy/dx = 2x = 2 * 3 = 6
    print(grad_1)

    grad_2 = torch.autograd.grad(grad_1[0], x)              # grad_2 = d(dy/dx)/dx = d(2x)/dx = 2
    print(grad_2)
    assert capsys.readouterr().out == "(tensor([6.], grad_fn=<MulBackward0>),)\n(tensor([2.]),)\n"
    assert x.grad is None  # autograd.grad does not touch .grad


def test_seed002_backward_with_gradient_weights(capsys):
    w = torch.tensor([1.], requires_grad=True)
    x = torch.tensor([2.], requires_grad=True)

    a = torch.add(w, x)     # retain_grad()
    b = torch.add(w, 1)

    y0 = torch.mul(a, b)    # y0 = (x+w) * (w+1)    dy2/dw = 5
    y1 = torch.add(a, b)    # y1 = (x+w) + (w+1)    dy1/dw = 2

    loss = torch.cat([y0, y1], dim=0)       # [y0, y1]
    grad_tensors = torch.tensor([1., 2.])   # 求梯度时是 5*1 + 2*2 = 9，对w求导

    loss.backward(gradient=grad_tensors)    # gradient 传入 torch.autograd.backward()中的grad_tensors

    print(w.grad)
    assert capsys.readouterr().out == "tensor([9.])\n"
    assert repr(loss.grad_fn).startswith("<CatBackward0 object at 0x")
    assert repr(x.grad) == "tensor([4.])"  # 1 * b + 2 * 1


def test_seed002_retain_graph(capsys):
    w = torch.tensor([1.], requires_grad=True)
    x = torch.tensor([2.], requires_grad=True)

    a = torch.add(w, x)
    b = torch.add(w, 1)
    y = torch.mul(a, b)

    y.backward(retain_graph=True)
    print(w.grad)
    y.backward()
    assert capsys.readouterr().out == "tensor([5.])\n"
    assert repr(w.grad) == "tensor([10.])"

    # "若中间的y.backward(retain_graph=False)，则会报错"
    with pytest.raises(RuntimeError) as err:
        y.backward()
    assert err.value.args[0] == FREED_MESSAGE and str(err.value).startswith(FREED_MESSAGE + "\n  at ")
    assert str(err.value).startswith("Trying to backward through the graph a second time")
    # the failed call changed nothing, and a fresh graph works right after
    assert repr(w.grad) == "tensor([10.])"
    torch.mul(torch.add(w, x), torch.add(w, 1)).backward()
    assert repr(w.grad) == "tensor([15.])"


def test_seed002_retain_graph_false_explicit():
    w = torch.tensor([1.], requires_grad=True)
    y = torch.mul(torch.add(w, 2.0), torch.add(w, 1))
    y.backward(retain_graph=False)
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()


def test_seed002_gradients_accumulate(capsys):
    w = torch.tensor([1.], requires_grad=True)
    x = torch.tensor([2.], requires_grad=True)

    for i in range(3):
        a = torch.add(w, x)
        b = torch.add(w, 1)
        y = torch.mul(a, b)

        y.backward()
        print(w.grad)
    assert capsys.readouterr().out == "tensor([5.])\ntensor([10.])\ntensor([15.])\n"


def test_seed002_zero_grad_each_step(capsys):
    w = torch.tensor([1.], requires_grad=True)
    x = torch.tensor([2.], requires_grad=True)

    for i in range(3):
        a = torch.add(w, x)
        b = torch.add(w, 1)
        y = torch.mul(a, b)

        y.backward()
        print(w.grad)
        w.grad.zero_()
    assert capsys.readouterr().out == "tensor([5.])\ntensor([5.])\ntensor([5.])\n"
    assert repr(x.grad) == "tensor([6.])"  # x.grad was never zeroed: 2 * 3
