"""`--replicas N` (docs/fleet.md, "Replicas"): one routed round on N distinct aliases, their
answers compared integer for integer, and the vote that decides which answer the chain
takes. Every target gives the same integers, so agreement is equality, never a tolerance."""
from dataclasses import dataclass, field

REPLICAS_MAX = 3  # 2 outvotes one liar with a third run; 3 outvotes one at once


def answer_of(graph, outputs: dict) -> tuple:
    """A round's answer as one comparable value: each output's name, shape and integers,
    in its flow's order."""
    return tuple((name, outputs[name].shape, outputs[name].data) for name, _ in graph.outputs)


@dataclass(frozen=True)
class Tally:
    """What a round's answers so far decide. `state`: `wait` (answers still due), `agreed`
    (all equal), `majority` (one answer given by more than half of them, and by at least
    two), `more` (no majority among the first N: one more alias decides) or `split` (no
    majority even then). `answer`: the answer taken; `outvoted`: the aliases that gave
    another, in the order they answered."""

    state: str
    answer: tuple | None = None
    outvoted: tuple[str, ...] = ()


def tally(answers: dict[str, tuple], wanted: int) -> Tally:
    """The vote over `answers` (alias -> answer, in the order they came) of a round asked
    of `wanted` aliases."""
    if len(answers) < wanted:
        return Tally("wait")
    counts: dict[tuple, int] = {}
    for answer in answers.values():
        counts[answer] = counts.get(answer, 0) + 1
    best = max(counts, key=counts.get)  # the first answer given of those most given
    if counts[best] == len(answers):
        return Tally("agreed", best)
    if counts[best] >= 2 and 2 * counts[best] > len(answers):
        return Tally("majority", best, tuple(a for a, v in answers.items() if v != best))
    return Tally("more" if len(answers) == wanted else "split")


@dataclass
class Ballot:
    """Round `round` of one configuration, its flow `graph`: the aliases asked so far
    (those whose answers are still due among them), and the answers in by alias, with
    their outputs."""

    round: int
    graph: object
    asked: list[str] = field(default_factory=list)
    answers: dict[str, tuple] = field(default_factory=dict)
    outputs: dict[str, dict] = field(default_factory=dict)

    def answered(self, alias: str, answer: tuple, outputs: dict) -> None:
        self.answers[alias] = answer
        self.outputs[alias] = outputs

    def taken(self, answer: tuple) -> tuple[list[str], dict]:
        """The aliases that gave `answer`, in the order they were asked, and its outputs."""
        agreed = [a for a in self.asked if self.answers.get(a) == answer]
        return agreed, self.outputs[agreed[0]]
