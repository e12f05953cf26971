"""fgrad.utils: PyTorch's torch.utils namespace for `import fgrad as torch` scripts
(`fgrad.utils.data`, `fgrad.utils.dlpack`).

`fgrad.utils.data` is fgrad.data itself (not a copy): `torch.utils.data.DataLoader`,
`import fgrad.utils.data`, `from fgrad.utils.data.sampler import ...` and
`from fgrad.utils.data._utils.collate import default_collate` all reach the same classes."""
import sys as _sys

from .. import data
from . import checkpoint, dlpack  # torch.utils.checkpoint; torch.utils.dlpack: from_dlpack, to_dlpack

# Alias fgrad.data and each of its submodules under fgrad.utils.data: without an entry in
# sys.modules, `import fgrad.utils.data.sampler` would load sampler.py a second time (fgrad.data's
# __path__ is shared), making classes that are not the ones fgrad.data uses.
for _name, _module in list(_sys.modules.items()):
    if _name == data.__name__ or _name.startswith(data.__name__ + "."):
        _sys.modules[__name__ + ".data" + _name[len(data.__name__):]] = _module

__all__ = ["checkpoint", "data", "dlpack"]
