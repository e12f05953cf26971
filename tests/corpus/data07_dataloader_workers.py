"""DataLoader with worker processes: num_workers=2 keeps the sampler's order, worker_init_fn and
get_worker_info, persistent_workers, and an IterableDataset sharded by worker id."""
import torch
from torch.utils.data import DataLoader, Dataset, IterableDataset, get_worker_info


class Squares(Dataset):
    def __len__(self):
        return 10

    def __getitem__(self, i):
        return torch.tensor([i, i * i])


class Shards(IterableDataset):
    def __iter__(self):
        info = get_worker_info()
        wid, n = (0, 1) if info is None else (info.id, info.num_workers)
        return iter(range(wid, 8, n))


def init_fn(worker_id):
    info = get_worker_info()
    assert info.id == worker_id and info.num_workers == 2


if __name__ == "__main__":
    torch.manual_seed(0)
    loader = DataLoader(Squares(), batch_size=3, num_workers=2, worker_init_fn=init_fn)
    print("batches from workers:", [b.tolist() for b in loader])
    loader = DataLoader(Squares(), batch_size=4, num_workers=2, persistent_workers=True,
                        shuffle=True, generator=torch.Generator().manual_seed(5))
    for epoch in range(2):
        print(f"epoch {epoch}:", [b[:, 0].tolist() for b in loader])
    print("main process worker info:", get_worker_info())
    print("sharded iterable:", sorted(int(x) for x in DataLoader(Shards(), batch_size=None, num_workers=2)))
    print("single process iterable:", [x for x in DataLoader(Shards(), batch_size=None)])
