"""Train the seed article's CNN on handwritten digits with fgrad's PyTorch-style facade.

This is the `model_training(net)` loop from the seed article (PyTorch中的自动微分特性与计算图解释)
ported line by line: `import fgrad.torch as torch` is the only change a PyTorch user needs. It runs
on scikit-learn's bundled 8x8 digits by default (offline) or on real MNIST with
`--mnist DIR` (the four IDX files), shows a tqdm bar per epoch, prints train/test accuracy
per epoch and writes a PNG with the loss/error curves and the recorded conv kernels.

    python examples/train_digits.py                 # digits: ~10 s on two CPU cores, ~98% test accuracy
    python examples/train_digits.py --mnist ~/data/mnist --epochs 2
    mpirun -n 2 python examples/train_digits.py --distributed   # data parallel over MPI

With --distributed (needs `pip install 'fgrad[distributed]'`) each of the N processes
trains a DistributedDataParallel replica on its shard of every global batch of
--batch-size samples (a DistributedSampler deals them out), so N processes end with the
same weights, to float rounding, as `python examples/train_digits.py --distributed` in one
process: the same global batches, the same dropout masks, the same averaged gradients. (The
rounding differs -- sums over N shards instead of one batch -- and where that flips a discrete
choice, a max-pool or ReLU at a near tie, the two runs drift apart slowly: after one epoch on
digits they agree to ~1e-8, after two to ~4e-4.)
"""
from __future__ import annotations

import argparse
import itertools
import os
import time

import numpy as np

import fgrad.torch as torch
import fgrad.torch.nn as nn
import fgrad.torch.nn.functional as F
import fgrad.torch.optim as optim
from fgrad.torch.utils.data import DataLoader, DistributedSampler, datasets

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
        self.shard: tuple[int, int] | None = None  # (world size, rank) when each process sees a shard of the batch

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = self.pool(x)
        x = F.relu(self.conv2(x))
        x = self.pool(x)
        x = x.view(-1, self.image_size // 4 * self.image_size // 4 * self.depth[1])
        x = F.relu(self.fc1(x))
        x = F.dropout(x, training=self.training) if self.shard is None else self.sharded_dropout(x)
        x = self.fc2(x)
        x = F.log_softmax(x, dim=1)
        return x

    def sharded_dropout(self, x):
        """Dropout with the mask one process would draw for the whole global batch: every
        rank draws it (keeping the random streams equal) and keeps the rows of its samples,
        which a DistributedSampler deals out round-robin (rank r has rows r, r + N, ...)."""
        if not self.training:
            return x
        assert self.shard is not None
        world, rank = self.shard
        mask = F.dropout(torch.ones(x.shape[0] * world, x.shape[1]), training=True)
        return x * mask[rank::world]


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


def model_training(net, train_loader, test_loader, num_epochs, lr, record_every, progress: bool | None = True,
                   model=None, steps_per_epoch=None, all_reduce=None):
    """Train `net` (through `model`, its DistributedDataParallel wrapper, when given) for
    `num_epochs` of at most `steps_per_epoch` batches; `all_reduce(array)` sums the epoch's
    counts over the processes. progress: True shows a bar and prints each epoch, False only
    prints, None does neither (the processes other than rank 0)."""
    model = net if model is None else model
    criterion = nn.CrossEntropyLoss()  # Loss函数的定义，交叉熵
    # The seed uses lr=0.001 for 28x28 MNIST (~940 steps per epoch). The digits set has 23
    # batches per epoch, so lr is raised to 0.01 (see --lr) to converge in a few epochs.
    optimizer = optim.SGD(model.parameters(), lr=lr, momentum=0.9)  # 优化器定义

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
        if hasattr(train_loader.sampler, "set_epoch"):  # a DistributedSampler: this epoch's order
            train_loader.sampler.set_epoch(epoch)
        batches = train_loader if steps_per_epoch is None else itertools.islice(train_loader, steps_per_epoch)
        bar = None
        if tqdm is not None and progress:
            batches = bar = tqdm(batches, desc=f"epoch {epoch + 1}/{num_epochs}", leave=False, ncols=80,
                                 total=steps_per_epoch or len(train_loader))
        for batch_idx, (data, target) in enumerate(batches):  # 对容器中的每一个批进行循环
            data, target = data.clone().requires_grad_(True), target.clone().detach()
            model.train()
            output = model(data)              # 神经网络完成一次前馈的计算过程
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
            if bar is not None:
                bar.set_postfix(loss=f"{losses[-1]:.3f}")
        counts = np.array([sum(r[0].item() for r in train_rights), sum(r[1] for r in train_rights),
                           sum(losses[-len(train_rights):]), len(train_rights)], np.float64)
        if all_reduce is not None:  # every process's share of the epoch
            counts = all_reduce(counts)
        train_acc, epoch_loss = counts[0] / counts[1], counts[2] / counts[3]
        test_acc = evaluate(net, test_loader)
        record.append((epoch + 1, epoch_loss, train_acc, test_acc))
        if progress is not None:
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
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--mnist", metavar="DIR", help="train on MNIST IDX files in DIR instead of digits")
    parser.add_argument("--epochs", type=int, default=None, help="default: 20 (digits), 2 (MNIST)")
    parser.add_argument("--batch-size", type=int, default=None, help="default: 32 (digits), 64 (MNIST)")
    parser.add_argument("--lr", type=float, default=None, help="default: 0.01 (digits), 0.001 (MNIST)")
    parser.add_argument("--record-every", type=int, default=20, help="record conv kernels every N steps")
    parser.add_argument("--out", default="train_digits.png", help="where to write the figure")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-progress", action="store_true")
    parser.add_argument("--distributed", action="store_true",
                        help="data parallel over the MPI job (launch with mpirun -n N); --batch-size is global")
    parser.add_argument("--save-weights", metavar="NPZ", help="write the final weights to this .npz file")
    args = parser.parse_args(argv)

    rank, world = 0, 1
    if args.distributed:
        import fgrad.distributed as dist  # needs mpi4py: only with --distributed
        dist.init()
        rank, world = dist.rank(), dist.world_size()
    torch.manual_seed(args.seed)
    if args.mnist:
        train_set, test_set = datasets.mnist(os.path.expanduser(args.mnist))
        epochs, batch_size, lr = args.epochs or 2, args.batch_size or 64, args.lr or 0.001
    else:
        train_set, test_set = datasets.digits()
        epochs, batch_size, lr = args.epochs or 20, args.batch_size or 32, args.lr or 0.01
    image_size = tuple(train_set.tensors[0].shape)[-1]
    steps, all_reduce = None, None
    if args.distributed:
        import fgrad.distributed as dist  # (imported and initialised above)
        if batch_size % world:
            parser.error(f"--batch-size {batch_size} (the global batch) must be a multiple of the {world} processes")
        # Each process loads its round-robin share of every global batch; only whole global
        # batches are trained on, so that every process takes the same number of steps.
        sampler = DistributedSampler(train_set, shuffle=True, seed=args.seed)
        train_loader = DataLoader(train_set, batch_size=batch_size // world, sampler=sampler)
        steps = len(train_set) // batch_size

        def sum_over_processes(a):
            return dist.all_reduce(a, "sum")
        all_reduce = sum_over_processes
    else:
        train_loader = DataLoader(train_set, batch_size=batch_size, shuffle=True)
    test_loader = DataLoader(test_set, batch_size=1000)
    net = model = ConvNet(image_size, SEED_DEPTH if args.mnist else DIGITS_DEPTH)
    if args.distributed:
        import fgrad.distributed as dist  # (imported and initialised above)
        net.shard = (world, rank)
        model = dist.DistributedDataParallel(net)  # starts every process from rank 0's weights
    speaks = rank == 0  # one process prints and writes files
    if speaks:
        print(net if world == 1 else f"{net}\ndata parallel over {world} processes, {batch_size // world} samples "
              f"each per global batch of {batch_size}")
    start = time.perf_counter()
    with _one_blas_thread(image_size < 16):
        record, weights, losses = model_training(net, train_loader, test_loader, epochs, lr, args.record_every,
                                                 progress=(not args.no_progress) if speaks else None,
                                                 model=model, steps_per_epoch=steps, all_reduce=all_reduce)
    elapsed = time.perf_counter() - start
    if speaks:
        print(f"final test accuracy {record[-1][3]:.4f} after {epochs} epochs in {elapsed:.1f} s")
        plot(record, weights, losses, args.out)
        print(f"wrote {args.out}")
        if args.save_weights:
            np.savez(args.save_weights, **{k: v.numpy() for k, v in net.state_dict().items()})
            print(f"wrote {args.save_weights}")
    return record


if __name__ == "__main__":
    main()
