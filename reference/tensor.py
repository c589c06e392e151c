"""The value type of the reference: an immutable shape plus flat row-major Python ints (D1)."""
from dataclasses import dataclass
from math import prod


@dataclass(frozen=True)
class Tensor:
    """A rank-0 value has shape () and one element. `wide` marks an int64 model descriptor (R30)."""

    shape: tuple[int, ...]
    data: tuple[int, ...]
    wide: bool = False

    def __post_init__(self):
        if prod(self.shape) != len(self.data):
            raise ValueError(f"shape {self.shape} does not hold {len(self.data)} elements")

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return len(self.data)

    @staticmethod
    def scalar(value: int) -> "Tensor":
        return Tensor((), (value,))

    def rows(self) -> list[tuple[int, ...]]:
        """A rank-2 tensor as a list of row tuples."""
        r, c = self.shape
        return [self.data[i * c:(i + 1) * c] for i in range(r)]


def shape_text(shape: tuple[int, ...]) -> str:
    """`scalar` for rank 0, else `[d1xd2x...]` (D2)."""
    return "scalar" if not shape else "[" + "x".join(str(d) for d in shape) + "]"


def format_value(name: str, t: Tensor) -> str:
    """One output line: `name : [S] = [v, ...]`, or `name : scalar = v` for rank 0 (D2)."""
    if not t.shape:
        return f"{name} : scalar = {t.data[0]}"
    return f"{name} : {shape_text(t.shape)} = [{', '.join(str(v) for v in t.data)}]"
