"""The language's fixed vocabularies (reserved words, decorators, directive keys, ML names)
and the nearest-name suggestion every "did you mean" uses."""


# The stack ops, Forth semantics, top on the right: op -> (values it takes, which of them it
# leaves, bottom first). dup a→a a, drop a→, swap a b→b a, over a b→a b a, rot a b c→b c a,
# -rot a b c→c a b. The one table; what an op needs and its depth change derive from it.
STACK_PERMS: dict[str, tuple[int, tuple[int, ...]]] = {
    "dup": (1, (0, 0)), "drop": (1, ()), "swap": (2, (1, 0)),
    "over": (2, (0, 1, 0)), "rot": (3, (1, 2, 0)), "-rot": (3, (2, 0, 1))}
STACK_OPS = tuple(STACK_PERMS)


def stack_needs(op: str) -> int:
    """How many values stack op `op` takes."""
    return STACK_PERMS[op][0]


def stack_delta(op: str) -> int:
    """The change in stack depth stack op `op` makes."""
    n, perm = STACK_PERMS[op]
    return len(perm) - n


def apply_stack_op(stack: list, op: str) -> None:
    """Permute the top of `stack` in place as `op` does (the caller checks the depth)."""
    n, perm = STACK_PERMS[op]
    top = stack[len(stack) - n:]
    stack[len(stack) - n:] = [top[i] for i in perm]

# Implemented as λ-terms only; unreachable from statements (E017).
COMBINATORS = ("identity", "kestrel", "kite", "compose")
# Reserved birds with no implementation (E017, R34).
BIRDS = ("mockingbird", "bluebird", "cardinal", "starling", "thrush", "warbler", "owl",
         "bluebird_prime", "blackbird", "psi", "phoenix", "vireo", "ycombinator")

KEYWORDS = ("return", "lambda", "end", "repeat", "true", "false", "env")
TYPE_NAMES = ("number", "tensor", "string", "text", "dictionary")

# Decorators: working, inert (W012) and out of scope (@clock, E025).
DECORATORS_WORKING = ("device", "unroll")
DECORATORS_INERT = ("quantize", "tile", "autodiff", "prefetch")
DECORATORS_SCOPE = ("clock",)
DECORATORS = DECORATORS_WORKING + DECORATORS_INERT + DECORATORS_SCOPE

# mnd:: directive keys that something consumes; `decimal_places` is an alias of quantres.
QUANT_KEYS = ("quantmax", "quantmin", "quantres", "decimal_places")
DIRECTIVE_KEYS = QUANT_KEYS

# device:: fields a worker declaration may hold (W015 for any other).
DEVICE_FIELDS = ("host", "port", "user", "pass", "token", "discover", "pool", "vm", "timeout")

# Input source kinds: loaded here, and known kinds we refuse with E018 (R11, R40).
INPUT_KINDS = ("csv", "model")
INPUT_KINDS_REFUSED = ("text", "image", "parquet", "packed", "safetensors", "jsonl",
                       "images", "profiles")
OUTPUT_KINDS = ("csv", "model")
OUTPUT_KINDS_REFUSED = ("text", "image", "parquet", "jsonl", "safetensors", "packed")

MAX_REPEAT = 256  # repeat(n) and @unroll(n) take 1..256


def nearest(name: str, candidates) -> str | None:
    """The candidate closest to `name`, or None when nothing is close."""
    import difflib  # a suggestion is made only on a failure
    best = difflib.get_close_matches(name, list(candidates), n=1, cutoff=0.6)
    return best[0] if best else None


def suggest(name: str, candidates) -> str:
    """` (did you mean 'x'?)` for the nearest candidate, or '' when nothing is close."""
    best = nearest(name, candidates)
    return f" (did you mean '{best}'?)" if best else ""
