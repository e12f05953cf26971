"""Train the seed article's CNN on handwritten digits with fgrad's PyTorch-style facade.

This is the `model_training(net)` loop from the seed article (PyTorch中的自动微分特性与计算图解释)
ported line by line: `import fgrad as torch` is the only change a PyTorch user needs. It runs
on scikit-learn's bundled 8x8 digits by default (offline) or on real MNIST with
`--mnist DIR` (the four IDX files), shows a tqdm bar per epoch, prints train/test accuracy
per epoch and writes a PNG with the loss/error curves and the recorded conv kernels.

    python examples/train_digits.py                 # digits: ~10 s on two CPU cores, ~98% test accuracy
    python examples/train_digits.py --mnist ~/data/mnist --epochs 2
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np

import fgrad as torch
import fgrad.nn as nn
import fgrad.nn.functional as F
import fgrad.optim as optim
from fgrad.data import DataLoader, datasets

SEED_DEPTH = [4, 8]     # the seed's conv channels, for 28x28 MNIST
DIGITS_DEPTH = [16, 32]  # 8x8 digits pool down to 2x2: wider convs keep enough features


class ConvNet(nn.Module):
    """The seed's ConvNet: conv 5x5 (pad 2) -> relu -> pool 2 -> conv 5x5 -> relu -> pool 2
    -> fc 512 -> relu -> dropout -> fc -> log_softmax, for images of side `image_size`."""

    def __init__(self, image_size: int, depth=SEED_DEPTH, num_classes: int = 10) -> None:
        super().__init__()
        self.image_size = image_size
        self.depth = depth = list(depth)
        self.conv1 = nn.Conv2d(1, depth[0], 5, padding=2)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(depth[0], depth[1], 5, padding=2)
        self.fc1 = nn.Linear(image_size // 4 * image_size // 4 * depth[1], 512)
        self.fc2 = nn.Linear(512, num_classes)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = self.pool(x)
        x = F.relu(self.conv2(x))
        x = self.pool(x)
        x = x.view(-1, self.image_size // 4 * self.image_size // 4 * self.depth[1])
        x = F.relu(self.fc1(x))
        x = F.dropout(x, training=self.training)
        x = self.fc2(x)
        x = F.log_softmax(x, dim=1)
        return x


def rightness(predictions, labels):
    """(number of correct predictions, number of samples) -- the seed's helper."""
    pred = torch.max(predictions.data, 1)[1]
    rights = pred.eq(labels.data.view_as(pred)).sum()
    return rights, len(labels)


def evaluate(net, loader):
    net.eval()
    rights = []
    with torch.no_grad():
        for data, target in loader:
            rights.append(rightness(net(data), target))
    return sum(r[0].item() for r in rights) / sum(r[1] for r in rights)


def model_training(net, train_loader, test_loader, num_epochs, lr, record_every, progress=True):
    criterion = nn.CrossEntropyLoss()  # Loss函数的定义，交叉熵
    # The seed uses lr=0.001 for 28x28 MNIST (~940 steps per epoch). The digits set has 23
    # batches per epoch, so lr is raised to 0.01 (see --lr) to converge in a few epochs.
    optimizer = optim.SGD(net.parameters(), lr=lr, momentum=0.9)  # 优化器定义

    record = []   # (epoch, train loss, train accuracy, test accuracy)
    weights = []  # 每若干步就记录一次卷积核 (conv kernels every `record_every` steps)
    losses = []   # loss of every step

    try:
        from tqdm import tqdm
    except ImportError:  # tqdm is optional
        tqdm = None

    step = 0
    for epoch in range(num_epochs):
        train_rights = []  # 记录训练集上准确率的容器
        batches = train_loader
        if tqdm is not None and progress:
            batches = tqdm(train_loader, desc=f"epoch {epoch + 1}/{num_epochs}", leave=False, ncols=80)
        for batch_idx, (data, target) in enumerate(batches):  # 对容器中的每一个批进行循环
            data, target = data.clone().requires_grad_(True), target.clone().detach()
            net.train()
            output = net(data)                # 神经网络完成一次前馈的计算过程
            loss = criterion(output, target)  # 将output与标签target比较，计算误差
            optimizer.zero_grad()             # 清空梯度
            loss.backward()                   # 反向传播
            optimizer.step()                  # 一步随机梯度下降算法
            right = rightness(output, target)  # 计算准确率所需数值
            train_rights.append(right)
            losses.append(loss.item())
            if step % record_every == 0:
                weights.append([net.conv1.weight.data.clone(), net.conv1.bias.data.clone(),
                                net.conv2.weight.data.clone(), net.conv2.bias.data.clone()])
            step += 1
            if tqdm is not None and progress:
                batches.set_postfix(loss=f"{losses[-1]:.3f}")
        train_acc = sum(r[0].item() for r in train_rights) / sum(r[1] for r in train_rights)
        test_acc = evaluate(net, test_loader)
        epoch_loss = float(np.mean(losses[-len(train_rights):]))
        record.append((epoch + 1, epoch_loss, train_acc, test_acc))
        print(f"epoch {epoch + 1:2d}  loss {epoch_loss:.4f}  train acc {train_acc:.4f}  "
              f"test acc {test_acc:.4f}", flush=True)
    return record, weights, losses


def plot(record, weights, losses, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(11, 7.5))
    grid = fig.add_gridspec(2, 1, height_ratios=[1.2, 1], hspace=0.4)
    top = grid[0].subgridspec(1, 2, wspace=0.3)
    ax = fig.add_subplot(top[0])
    ax.plot(losses, lw=0.8)
    ax.set_xlabel("step")
    ax.set_ylabel("training loss")
    ax.set_yscale("log")
    ax = fig.add_subplot(top[1])
    epochs = [r[0] for r in record]
    ax.plot(epochs, [100 * (1 - r[2]) for r in record], "o-", label="train error %")
    ax.plot(epochs, [100 * (1 - r[3]) for r in record], "s-", label="test error %")
    ax.set_xlabel("epoch")
    ax.set_ylabel("error rate (%)")
    ax.legend()
    # conv1 kernels at the first and the last recording
    first, last = weights[0][0].numpy()[:, 0], weights[-1][0].numpy()[:, 0]
    n = min(first.shape[0], 16)
    kgrid = grid[1].subgridspec(2, n, hspace=0.15, wspace=0.1)
    for row, kernels in enumerate((first, last)):
        for k in range(n):
            axk = fig.add_subplot(kgrid[row, k])
            axk.imshow(kernels[k], cmap="gray")
            axk.set_xticks([])
            axk.set_yticks([])
            if k == 0:
                axk.set_ylabel("first" if row == 0 else "last", fontsize=9)
    fig.text(0.5, 0.41, f"conv1 kernels (recorded {len(weights)} times during training)", ha="center")
    fig.savefig(path, dpi=90, bbox_inches="tight")
    plt.close(fig)


def _one_blas_thread(enable: bool):
    """The digits network's matrices are tiny: BLAS threads cost more to wake than the work
    they share (and stall when the CPU is busy), so use one."""
    import contextlib
    if enable:
        try:
            from threadpoolctl import threadpool_limits
            return threadpool_limits(1)
        except ImportError:
            pass
    return contextlib.nullcontext()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mnist", metavar="DIR", help="train on MNIST IDX files in DIR instead of digits")
    parser.add_argument("--epochs", type=int, default=None, help="default: 20 (digits), 2 (MNIST)")
    parser.add_argument("--batch-size", type=int, default=None, help="default: 32 (digits), 64 (MNIST)")
    parser.add_argument("--lr", type=float, default=None, help="default: 0.01 (digits), 0.001 (MNIST)")
    parser.add_argument("--record-every", type=int, default=20, help="record conv kernels every N steps")
    parser.add_argument("--out", default="train_digits.png", help="where to write the figure")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)

    torch.manual_seed(args.seed)
    if args.mnist:
        train_set, test_set = datasets.mnist(os.path.expanduser(args.mnist))
        epochs, batch_size, lr = args.epochs or 2, args.batch_size or 64, args.lr or 0.001
    else:
        train_set, test_set = datasets.digits()
        epochs, batch_size, lr = args.epochs or 20, args.batch_size or 32, args.lr or 0.01
    image_size = tuple(train_set.tensors[0].shape)[-1]
    train_loader = DataLoader(train_set, batch_size=batch_size, shuffle=True)
    test_loader = DataLoader(test_set, batch_size=1000)
    net = ConvNet(image_size, SEED_DEPTH if args.mnist else DIGITS_DEPTH)
    print(net)
    start = time.perf_counter()
    with _one_blas_thread(image_size < 16):
        record, weights, losses = model_training(net, train_loader, test_loader, epochs, lr,
                                                 args.record_every, progress=not args.no_progress)
    elapsed = time.perf_counter() - start
    print(f"final test accuracy {record[-1][3]:.4f} after {epochs} epochs in {elapsed:.1f} s")
    plot(record, weights, losses, args.out)
    print(f"wrote {args.out}")
    return record


if __name__ == "__main__":
    main()
