"""Static diagnostics, one row per case: (code, snippet, line, col, message substring).

Each snippet follows HEADER (three lines), so its first line is line 4. `tests/test_lint.py`
runs every row through `check_source` (parse, then lint when the parse had no error) and
asserts the code fires at (line, col). Every static code has at least one row.
"""
from support.scripts import H0 as HEADER

_FLOW_F = "calc::lambda_flow f(x) {{\n{}\n}} return y;\n"  # body lines at 5.., return at 6+


def flow(body: str) -> str:
    """A flow `f(x)` with `body` (its lines start at line 5) returning `y`."""
    return _FLOW_F.format(body)


CASES = [
    # --- parser codes ---------------------------------------------------------------------
    ("EPARSE", flow("  add y ="), 5, 3, None),
    ("E006", flow("  A[0] 1 add y ="), 5, 3, None),
    ("E006", flow("  x r.eig add y ="), 5, 5, "'r.eig'"),
    ("E009", "calc::lambda_flw g(x) {\n  x 1 add y =\n} return y;\n", 4, 1, None),
    ("E010", "mnd::quantrange=100;\n", 4, 1, None),
    ("E011", "mnd::register_backward=1;\n", 4, 1, None),
    ("E013", "calc::lambda_symphony s(x) {\n  x 1 add y =\n} return y;\n", 4, 1, None),
    ("E014", "calc::lambda_calculator c(x) {\n  x 1 add y =\n} return y;\n", 4, 1, None),
    ("E015", flow("  x mnd::backpropagation y ="), 5, 5, None),
    ("E016", "mnd::device::fpga { host = \"local\"; }\n", 4, 1, None),
    ("E017", flow("  x kestrel y ="), 5, 5, "kestrel"),
    ("E017", flow("  x ycombinator y ="), 5, 5, None),
    ("E018", "in::t = parquet(\"t.parquet\");\n", 4, 9, None),
    ("E018", "in::a = 1;\nout::a = parquet(\"a.parquet\");\n", 5, 10, "out::a"),
    ("E019", "calc::lambda_flow f(x) {\n  repeat(a):\n    x 1 add x =\n  end\n} return x;\n",
     5, 10, None),
    ("E021", "in::X = [[1, 2], [3, 4]];\nin::Y = [[1], [2]];\n"
             "calc::ml::foo fit(X, Y) {} return model;\n", 6, 1, None),
    ("E022", "in::X = [[1, 2], [3, 4]];\nin::Y = [[1], [2]];\n"
             "calc::ml::linear_regression fit(X, Y) { lr: 0.05, features: 2 } return model;\n",
     6, 45, "'lr'"),
    ("E023", "in::x = 0.5;\n", 4, 9, None),
    ("E025", "frame::f = jsonl(\"d.jsonl\");\n", 4, 1, None),
    ("E026", "in::x = 3000000000;\n", 4, 9, None),
    # --- linter errors --------------------------------------------------------------------
    ("E001", flow("  x 1 add y =") + flow("  x 2 add y ="), 7, 1, "flow 'f'"),
    ("E001", flow("  x 1 add y =") + "in::X = [[1, 2], [3, 4]];\n"
             "calc::ml::kmeans f(X) { k: 2 } return model;\n", 8, 1, "'f'"),
    ("E002", "calc::lambda_flow two(x) {\n  x 1 add a =\n  x 2 add b =\n} return a, b;\n"
             "calc::lambda_flow f(x) {\n  x two q, q =\n} return q;\n", 9, 12, "'q'"),
    ("E003", flow("  x xx add y ="), 5, 5, "did you mean 'x'"),
    ("E003", flow("  x x matmull y ="), 5, 7, "did you mean the op 'matmul'"),
    ("E003", "calc::lambda_flow g(x) {\n  x x add y =\n} return y;\n" + flow("  x gg y ="),
     8, 5, "did you mean the flow 'g'"),
    ("E003", "calc::lambda_flow f(x) {\n  repeat(3):\n    t 1 add t =\n  end\n} return x;\n",
     6, 5, "repeat body has no locals"),
    ("E003", flow("  x 1 add z =\n  z w add y ="), 6, 5, "'w'"),
    ("E003", "in::a = 2;\nb 1 add c =\n", 5, 1, "'b'"),
    ("E003", "in::a = 2;\nreturn(a c add);\n", 5, 10, "'c'"),
    ("E004", "calc::lambda_flow f(x, x) {\n  x 1 add y =\n} return y;\n", 4, 24, "'x'"),
    ("E005", "calc::lambda_flow f(x) {\n  x 1 add y =\n} return r;\n", 6, 10, "'r'"),
    ("E007", "mnd::quantmaxx=5;\n", 4, 1, "did you mean 'quantmax'"),
    ("E008", "@devcie(rex)\n" + flow("  x 1 add y ="), 4, 1, "did you mean 'device'"),
    ("E012", "mnd::routing_policy=1;\n", 4, 1, "@device"),
    ("E012", "mnd::routing_policy { a: 1 };\n", 4, 1, "@device"),
    ("E020", "mnd::checkpoint_every=5;\n", 4, 1, None),
    ("E024", "device::bob { port = 4780; }\n", 4, 1, "'bob'"),
    ("E030", 'device::vm1 { host = "local"; }\ncalc::lambda_flow f(x) @device(vm2) {\n'
     '  x x add y =\n} return y;\n', 5, 32, "(did you mean 'vm1'?)"),
    ("E032", 'device::bob { host = "h"; discover = true; }\n', 4, 15, "exclude each other"),
    ("E032", "device::bob { discover = true; port = 1; }\n", 4, 32, "the worker's port"),
    ("E032", "device::bob { discover = 2; }\n", 4, 15, "takes true or false"),
    ("W018", "device::bob { pool = true; }\n", 4, 1, "an extension of this implementation"),
    # --- linter warnings ------------------------------------------------------------------
    ("W001", "calc::lambda_flow f(x, u) {\n  x 1 add y =\n} return y;\n", 4, 24, "'u'"),
    ("W002", flow("  x 1 add z =\n  z 2 add z =\n  z 3 add y ="), 6, 11, "'z'"),
    ("W003", flow("  x {axis: 0, axis: 1} tensor_sum y ="), 5, 15, "'axis'"),
    ("W004", flow("  x 1 add t =\n  x 2 add y ="), 5, 11, "'t'"),
    ("W005", "device::bob { host = \"local\"; host = \"local\"; }\n", 4, 31, "'host'"),
    ("W006", "in::a = 1;\nin::a = 2;\n", 5, 1, "in::a"),
    ("W007", "device::rex { host = \"local\"; }\n"
             "calc::lambda_flow h(x) @device(rex) {\n  x 1 add y =\n} return y;\n"
             "calc::lambda_flow f(x) {\n  x h y =\n} return y;\n", 5, 32, "'h'"),
    ("W009", flow("  x 1 add y =") + "out::y = csv(\"o.csv\");\nout::x = csv(\"o.csv\");\n",
     8, 1, "o.csv"),
    ("W010", flow("  return(x);\n  x 1 add y ="), 5, 3, None),
    ("W011", flow("  x gelu y ="), 5, 5,
     "op 'gelu' is registered but not executable on any path - it will refuse at run time"),
    ("W012", flow("  @tile{tile_m: 2}\n  x 1 add y ="), 5, 3, "@tile"),
    ("W012", "@autodiff\n" + flow("  x 1 add y ="), 4, 1, "@autodiff"),
    ("W013", "device::rex { host = \"local\"; }\n"
             "calc::lambda_flow f(x) @device(rex) {\n  x abs y =\n} return y;\n",
     6, 5, "'abs'"),
    ("W014", "device::bob { host = \"h\"; user = \"u\"; pass = \"hunter2\"; }\n", 4, 39, "pass"),
    ("W014", "device::bob { host = \"h\"; token = \"abc\"; }\n", 4, 27, "token"),
    ("W015", "device::bob { hots = \"h\"; discover = true; }\n", 4, 15, "did you mean 'host'"),
    ("W016", "@unroll(3)\ncalc::lambda_flow f(x, n) {\n  x n f y, m =\n} return y, m;\n",
     6, 7, "'x'"),
    ("W017", flow("  x 1 2 y ="), 5, 3, "2 value(s)"),
    ("W019", "in::X = [[1,2],[3,4]];\nin::y = [[0],[7]];\ncalc::ml::svm fit(X, y) "
     "{ features: 2 } return model;\n", 5, 1,
     "y holds 0, 7, not a label of svm: its labels are -1 and 1 at quantres 0"),
    ("W021", "calc::ml::linear_regression fit(X, y) { features: 2, iters: [3, 4], lr: [1, 2] }"
     " return a, b, c, d;\n", 4, 1, "sweeps a grid over iters, lr, an extension of this "
     "implementation"),
]

# A realistic script on which nothing at all fires (parser and linter).
CLEAN = HEADER + """\
device::rex { host = "local"; }
device::bob {
  host = "192.168.100.76";
  port = 4780;
  user = "test";
  pass = env("MANED_BOB_PASS");
}
in::a = [[1, 2], [3, 4]];
in::b = [[5, 6], [7, 8]];
in::k = 3;
out::s = csv("s.csv");
a b add ab =
return(ab 2 mul);
calc::lambda_flow double(x) {
  x 2 mul y =
} return y;
@unroll(3)
calc::lambda_flow countdown(n, acc) {
  n 1 sub m =
  acc n add acc2 =
  m acc2 countdown r, t =
} return r, t;
calc::lambda_flow main() {
  ab double d =
  repeat(4):
    d 1 add d =
  end
  k 0 countdown c, total =
  d total add e =
  e c swap sub res =
} return res;
calc::lambda_flow mm(res, b) @device(rex) {
  res b matmul p =
  p relu s =
} return s;
"""
