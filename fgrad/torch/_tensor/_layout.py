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
