"""The diagnostics ledger (D3, R24, R25): every code this project may emit, in one table.

A new code takes the next free number listed here (never one found by scanning the source);
retired numbers (W008) are never reused. `stage` picks the line prefix of R2:
parse -> `parse error [L:C]`, ml -> `ml error [L:C]`, lint -> `lint error [L:C]`,
run -> `error:`. `status` is `active`, `planned` (emitted by a later issue; exempt from the
source-scan half of the drift test) or `retired`.
"""
from dataclasses import dataclass


@dataclass(frozen=True)
class Code:
    code: str
    severity: str  # "error" | "warning"
    stage: str  # "parse" | "ml" | "lint" | "run"
    area: str  # the issue area that emits it: core, ml, routing, network
    status: str  # "active" | "planned" | "retired"
    meaning: str


def _e(code, stage, meaning, area="core", status="active"):
    return Code(code, "error", stage, area, status, meaning)


def _w(code, meaning, area="core", status="active"):
    return Code(code, "warning", "lint", area, status, meaning)


LEDGER: dict[str, Code] = {c.code: c for c in (
    _e("E001", "lint", "duplicate flow definition"),
    _e("E002", "lint", "one name twice in one assignment target list"),
    _e("E003", "lint", "undefined variable (nearest defined name suggested)"),
    _e("E004", "lint", "duplicate parameter"),
    _e("E005", "lint", "return clause names an undefined variable"),
    _e("E006", "lint", "indexed or property reference inside a flow body"),
    _e("E007", "lint", "unknown mnd:: directive key (nearest key suggested)"),
    _e("E008", "lint", "unknown decorator (nearest decorator suggested)"),
    _e("E009", "parse", "unrecognized calc:: definition kind"),
    _e("E010", "parse", "mnd::quantrange is consumed by nothing"),
    _e("E011", "parse", "mnd::register_backward, legacy quant, *_fwd / *_grad keys"),
    _e("E012", "lint", "mnd::routing_policy is reserved; use @device(alias)"),
    _e("E013", "parse", "calc::lambda_symphony is reserved"),
    _e("E014", "parse", "calc::lambda_calculator is reserved"),
    _e("E015", "parse", "mnd::backpropagation in statement position"),
    _e("E016", "parse", "legacy mnd::device:: block"),
    _e("E017", "parse", "lambda expressions and combinator names are retracted"),
    _e("E018", "lint", "in:: or out:: kind this implementation does not load or write"),
    _e("E019", "parse", "repeat takes one integer count 1..256"),
    _e("E020", "lint", "mnd::checkpoint_every is consumed by nothing"),
    _e("E021", "ml", "unknown or missing calc::ml:: algorithm"),
    _e("E022", "ml", "malformed calc::ml:: definition"),
    _e("E023", "parse", "float literal in a value position"),
    _e("E024", "lint", "device:: block without host or discover"),
    _e("E025", "lint", "out-of-scope statement, section, op or constructor"),
    _e("E026", "lint", "value outside int32, or a constructor over 2^22 elements"),
    _e("E027", "ml", "ML definition refused before training", area="ml"),
    _e("E028", "ml", "ML fit refused at run time (unfit data)", area="ml"),
    _e("E029", "run", "a file that opens but holds bad content"),
    _e("E030", "lint", "@device names an alias no device:: block declares (nearest suggested)"),
    _e("E031", "lint", "a script over a documented limit (source size, training steps, "
       "round flows)"),
    _e("E032", "lint", "a device:: block whose discover or pool field contradicts its others "
       "(host or port with either, discover with pool) or is not true/false/1/0"),
    _w("W001", "unused parameter"),
    _w("W002", "variable assigned in more than one statement"),
    _w("W003", "duplicate object-parameter key"),
    _w("W004", "unused variable"),
    _w("W005", "duplicate device:: field"),
    _w("W006", "in:: input defined more than once"),
    _w("W007", "@device on a called (inlined) flow is ignored"),
    Code("W008", "warning", "lint", "core", "retired", "retired; never emitted, never reused"),
    _w("W009", "two out:: declarations write the same path"),
    _w("W010", "return(...) or memory::write inside a flow body does nothing"),
    _w("W011", "op with no evaluator on any path"),
    _w("W012", "registered but inert decorator"),
    _w("W013", "op runs locally only but its flow is routed with @device"),
    _w("W014", "literal credential (pass or token) in a device:: block"),
    _w("W015", "unknown device:: field"),
    _w("W016", "@unroll threads a parameter through unchanged"),
    _w("W017", "values left on the stack at '=' (the top binds, the rest drop)"),
    _w("W018", "a device pool (pool = true): this implementation's extension"),
    _w("W019", "a binary classifier's y holds values outside its labels (0/S, svm ±S)",
       area="ml"),
    _w("W020", "a routed flow's value leaves the int8 wire envelope its quant range selects"),
    _w("W021", "a grid sweep (several list-valued hyperparameters): this implementation's "
       "extension", area="ml"),
    _e("EPARSE", "parse", "text the grammar cannot parse"),
    _e("ELIMIT", "lint", "a flow exceeds a limit after inlining (register budget)"),
    _e("EUSAGE", "run", "bad command line"),
    _e("EIO", "run", "a file that cannot be opened, read or written"),
    _e("EPLAN", "run", "refused while planning"),
    _e("ERUN", "run", "a flow failed while running"),
)}

# Exit code 2 (R1): usage, I/O, and text the grammar cannot parse. Every other error: 1.
EXIT_TWO = frozenset({"EUSAGE", "EIO", "EPARSE"})


def code_info(code: str) -> Code:
    """The ledger row of `code`; an unknown code is a bug in the emitter."""
    return LEDGER[code]


def exit_code(codes) -> int:
    """The process exit code for a set of error codes (R1): 2 beats 1 beats 0."""
    codes = [c for c in codes if LEDGER[c].severity == "error"]
    if not codes:
        return 0
    return 2 if any(c in EXIT_TWO for c in codes) else 1
