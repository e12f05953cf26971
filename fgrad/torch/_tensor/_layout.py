"""Memory layouts (torch.layout): `strided` for dense tensors, `sparse_coo` for fgrad.torch.sparse's."""


class layout:
    """A tensor's memory layout: torch.strided (dense) or torch.sparse_coo."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name}"


strided = layout("strided")
sparse_coo = layout("sparse_coo")


class memory_format:
    """How a dense tensor's elements are ordered in memory (PyTorch's torch.memory_format):
    torch.contiguous_format (row-major), torch.channels_last (NHWC order of a 4-d NCHW tensor),
    torch.channels_last_3d (NDHWC of a 5-d NCDHW one) and torch.preserve_format (whatever the
    source tensor has). The formats are the module's four instances; no others can be made."""

    __slots__ = ("name",)

    def __new__(cls, *args, **kwargs):
        raise TypeError("cannot create 'torch.memory_format' instances")

    @classmethod
    def _make(cls, name: str) -> "memory_format":
        self = object.__new__(cls)
        self.name = name
        return self

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    def __reduce__(self):
        return (_format_named, (self.name,))


def _format_named(name: str) -> memory_format:
    """The memory format called `name` (how pickle restores one: the same object)."""
    return _FORMATS[name]


contiguous_format = memory_format._make("contiguous_format")
legacy_contiguous_format = contiguous_format  # (PyTorch's name for the same format)
channels_last = memory_format._make("channels_last")
channels_last_3d = memory_format._make("channels_last_3d")
preserve_format = memory_format._make("preserve_format")
_FORMATS = {f.name: f for f in (contiguous_format, channels_last, channels_last_3d, preserve_format)}

# the order of dims from fastest- to slowest-varying in memory, per channels-last format
CHANNELS_LAST_ORDER = {channels_last: (1, 3, 2, 0), channels_last_3d: (1, 4, 3, 2, 0)}
