"""fgrad.torch.utils.data: datasets, samplers and the DataLoader, with PyTorch's torch.utils.data names and
behaviour. Under `import fgrad.torch as torch` it is also `torch.utils.data` (fgrad.torch.utils.data is this
package, submodules included); `datasets` adds ready-made datasets (digits, MNIST)."""
from . import _utils  # noqa: F401
from ._utils.collate import default_collate, default_convert
from ._utils.fetch import _DatasetKind
from ._utils.worker import WorkerInfo, get_worker_info
from .dataloader import DataLoader
from .dataset import (ChainDataset, ConcatDataset, Dataset, IterableDataset, StackDataset, Subset, TensorDataset,
                      random_split)
from .distributed import DistributedSampler
from .sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler,
                      WeightedRandomSampler)
from . import datasets  # noqa: F401
from .datapipes import (DFIterDataPipe, DataChunk, IterDataPipe, MapDataPipe, argument_validation,
                        functional_datapipe, guaranteed_datapipes_determinism, non_deterministic, runtime_validation,
                        runtime_validation_disabled)

__all__ = ["BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset", "DistributedSampler",
           "IterableDataset", "RandomSampler", "Sampler", "SequentialSampler", "StackDataset", "Subset",
           "SubsetRandomSampler", "TensorDataset", "WeightedRandomSampler", "WorkerInfo", "_DatasetKind",
           "datasets", "default_collate", "default_convert", "get_worker_info", "random_split",
           "DFIterDataPipe", "DataChunk", "IterDataPipe", "MapDataPipe", "argument_validation", "functional_datapipe",
           "guaranteed_datapipes_determinism", "non_deterministic", "runtime_validation",
           "runtime_validation_disabled"]
