"""The parser: the in-scope scripts of spec/language.md §8 parse cleanly with the right tree,
every parse-time code fires at its anchor, and no input makes parse() raise."""
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from maned.diagnostics import Pos
from maned.diagnostics.ledger import LEDGER
from maned.lang.ast import (CtorInput, DeviceDecl, EnvRef, FileInput, FlowCall, InertPrint,
                            LiteralInput, MLDef, Num, OpCall, OutputDecl, PrintStatement,
                            Repeat, StackOp, StatusDecl, TensorLit, TopStatement)
from maned.lang.parser import parse

from support.scripts import H0, H2, HML

TV01 = H0 + """
in::a = 2;
in::b = 3;
in::c = 4;

calc::lambda_flow arithmetic(a, b, c) {
    a b add c mul sum_then_scale =   # (2 + 3) * 4 = 20
    b c mul a add scale_then_sum =   # 2 + (3 * 4) = 14
} return sum_then_scale, scale_then_sum;
"""
TV02 = """mnd::quantmax = 1000;
mnd::quantmin = -1000;
mnd::quantres = 0;

in::x    = [[2,0],[0,2]];
in::w    = [[3,4],[5,6]];
in::bias = [[0,0],[0,-100]];

calc::lambda_flow layer(x, w, bias) {
    x w matmul    p =
    p bias elemwise_add s =
    s relu        result =
} return result;
"""
TV03 = H0 + """
calc::lambda_flow layer(x, w, bias) {
    x w matmul product =
    product bias elemwise_add shifted =
    shifted relu result =
} return result;
"""
TV04 = H0 + """
calc::lambda_flow add_and_scale(a, b, scale) {
    a b add sum =
    sum scale scalar_mul result =
} return result;
"""
TV06_INPUTS = """
in::x = [[10,20],[30,40]];
in::y = [[99, 1],[ 7,77]];
"""
TV06 = H0 + TV06_INPUTS + """
calc::lambda_flow birds(x, y) {
    x same =                          # I  : an operand alone binds itself

    x y drop      kestrel_keeps_x =   # K  : push both, discard the second
    x y swap drop kite_keeps_y =      # KI : push both, swap, discard

    x dup elemwise_add warbler_doubles =   # W : dup supplies x twice
    x dup matmul       warbler_squares =

    x y elemwise_sub      cardinal_before =  # C : swap before a
    x y swap elemwise_sub cardinal_after =   #     non-commutative op

    x transpose relu bluebird_relu_of_transpose =   # B : write g, then f
} return same, kestrel_keeps_x, kite_keeps_y, warbler_doubles,
         warbler_squares, cardinal_before, cardinal_after,
         bluebird_relu_of_transpose;
"""
TV07 = H0 + TV06_INPUTS + """
calc::lambda_flow choose(x, y) {
    x y > c =                                  # 1 where x > y, else 0

    c x elemwise_mul     k_branch =            # the TRUE branch, gated by c
    1 c sub              not_c =               # negation, by arithmetic
    not_c y elemwise_mul ki_branch =           # the FALSE branch
    k_branch ki_branch elemwise_add selected = # = elementwise max(x, y)

    c y elemwise_mul     k_swapped =           # the same shape, branches
    not_c x elemwise_mul ki_swapped =          # exchanged
    k_swapped ki_swapped elemwise_add selected_other =   # = min(x, y)
} return c, selected, selected_other;
"""
TV09 = H0 + """
in::W = [[1,1],[0,1]];    # a shear: W^n has n in the corner
in::h = [[0],[1]];

@unroll(5)
calc::lambda_flow power_step(h, W) {
    W h matmul h2 =
    h2 W power_step out =
} return out;

calc::lambda_flow top(h, W) {
    h W power_step p =
} return p;
"""
TV11 = H0 + """
in::a = [[1,2,3],[4,5,6]];      # 2x3
in::b = [[1,0],[0,1],[1,1]];    # 3x2

calc::lambda_flow linalg(a, b) {
    a b matmul       product =
    a transpose      a_t =
    product transpose lhs =
    b transpose      b_t =
    b_t a_t matmul   rhs =
    lhs rhs ==       identity_holds =
    a_t a matmul     gram =          # A^T A: square, symmetric, PSD
} return product, a_t, identity_holds, gram;
"""
TV12 = H2 + """
in::a    = [[100,200],[300,100]];   # [[1.00, 2.00],[3.00, 1.00]]
in::b    = [[100,0],[0,100]];       # the IDENTITY, at scale 2
in::unit = [[100,100],[100,100]];   # 10^q, as a tensor

calc::lambda_flow scales(a, b, unit) {
    a b matmul       raw =          # scale 2q = 4
    raw unit elemwise_div back =    # back to scale q
} return raw, back;
"""
TV13 = H0 + """
in::scores = [[1,2,3],[4,5,6]];

calc::lambda_flow stats(scores) {
    scores {axis: 0} tensor_sum  per_col =
    scores {axis: 1} tensor_sum  per_row =
    scores {axis: 0} tensor_mean col_mean =
    scores {axis: 1} tensor_max  row_max =
    scores tensor_sum            grand =
} return per_col, per_row, col_mean, row_max, grand;
"""
TV14 = H2 + """
in::A   = [[600,200],[100,400]];   # [[6.00, 2.00],[1.00, 4.00]]
in::b   = [[800],[900]];           # [8.00, 9.00]
in::oc2 = [[1],[1]];               # 2x1 ones, to broadcast a scalar

calc::lambda_flow solve(A, b, oc2) {
    A determinant det =                       # scale 2q
    det { rows: 1, cols: 1 } reshape det11 =
    oc2 det11 matmul D =                      # 2x1, every entry = det
    A adjugate      adj =                     # scale q
    adj b matmul    num =                      # scale 2q
    num 100 scalar_mul numq =                  # x 10^q -> scale 3q
    numq D elemwise_div x =                    # / scale 2q -> scale q
    A x matmul      check =                    # == b, at scale 2q
} return det, adj, x, check;
"""
TV15 = H0 + """
in::u   = [[0],[1],[2],[3]];     # 4x1 column
in::v   = [[0,1,2,3]];           # 1x4 row
in::or4 = [[1,1,1,1]];
in::oc4 = [[1],[1],[1],[1]];
in::x   = [[10,20,30,40]];

calc::lambda_flow gather(u, v, or4, oc4, x) {
    u or4 matmul U =             # U[i][j] = u[i]
    oc4 v matmul V =             # V[i][j] = v[j]
    U V ==       E =             # the outer-equality matrix
    x E matmul   same =
} return E, same;
"""
TV20 = HML + """
# 8 samples of y = 2*x1 - x2 + 3, pre-scaled (100 == 1.00).
in::X = [[100,200],[200,100],[300,500],[400,200],[500,800],[600,300],[0,100],[200,700]];
in::y = [[300],[600],[400],[900],[500],[1200],[200],[0]];

# New rows: (1,1) -> 4.00, (3,1) -> 8.00, (0,5) -> -2.00.
in::Xnew = [[100,100],[300,100],[0,500]];

calc::ml::linear_regression fit(X, y) {
    iters: 400,
    lr: 5,
    features: 2
} return model, loss;

calc::lambda_flow infer(model, Xnew) {
    model Xnew ml_predict yhat =
} return yhat;
"""
TV21 = HML + """
in::X = [[100,200],[200,100]];
in::y = [[300],[600]];
device::vm1 { host = "local"; }
device::vm2 { host = "local"; }

calc::ml::linear_regression fit(X, y) @device(vm1, vm2) {
    iters: 400,
    lr: [2, 5, 10],       # three configurations: 0.02, 0.05, 0.10
    features: 2
} return m0, l0, m1, l1, m2, l2;
"""
TV23 = HML + """
in::O = [[0,100,0,100,200,200,200,200],
         [100,0,100,0,200,200,100,200],
         [0,0,100,200,200,200,200,200],
         [100,100,0,0,0,200,200,200],
         [0,100,100,0,200,100,200,200],
         [100,0,0,100,200,200,200,0]];

calc::ml::hmm fit(O) {
    states: 2,
    symbols: 3,
    steps: 8,
    iters: 3
} return model, score;

calc::lambda_flow infer(model, O) {
    model O ml_predict states =    # [sequences, steps], raw 0..K-1
} return states;
"""
TV25 = H0 + """
in::a = [[1,2],[3,4]];
in::b = [[5,6],[7,8]];

device::bob {
    host = "192.168.100.76";
    port = 4780;
    user = "test";
    pass = env("MANED_BOB_PASS");
}

calc::lambda_flow multiply(a, b) @device(bob) {
    a b matmul result =
} return result;
"""

VECTORS = {"TV-01": TV01, "TV-02": TV02, "TV-03": TV03, "TV-04": TV04, "TV-06": TV06,
           "TV-07": TV07, "TV-09": TV09, "TV-11": TV11, "TV-12": TV12, "TV-13": TV13,
           "TV-14": TV14, "TV-15": TV15, "TV-20": TV20, "TV-21": TV21, "TV-23": TV23,
           "TV-25": TV25}


def clean(text):
    program, diags = parse(text)
    assert diags == [], diags
    assert program is not None
    return program


def kinds(stmt):
    return [type(t).__name__ for t in stmt.terms]


@pytest.mark.parametrize("name", sorted(VECTORS))
def test_vectors_parse_without_diagnostics(name):
    program = clean(VECTORS[name])
    assert program.quant.quantmax in (100, 1000)


def test_tv01_structure():
    p = clean(TV01)
    assert (p.quant.quantmax, p.quant.quantmin, p.quant.quantres) == (1000, -1000, 0)
    assert [i.name for i in p.inputs] == ["a", "b", "c"]
    assert p.inputs[0].value == LiteralInput(Pos(5, 9), (), (2,))
    (flow,) = p.flows
    assert [x.name for x in flow.params] == ["a", "b", "c"]
    s0 = flow.body[0]
    assert kinds(s0) == ["Ref", "Ref", "OpCall", "Ref", "OpCall"]
    assert [t.name for t in s0.targets] == ["sum_then_scale"] and s0.leftover == 0
    assert s0.pos == Pos(10, 5) and s0.targets[0].pos == Pos(10, 19)
    assert [r.name for r in flow.returns] == ["sum_then_scale", "scale_then_sum"]
    assert flow.pos == Pos(9, 1)


def test_tv02_spellings_and_tensor_inputs():
    p = clean(TV02)
    bias = p.inputs[2].value
    assert bias.shape == (2, 2) and bias.data == (0, 0, 0, -100)
    add = p.flows[0].body[1].terms[2]
    assert add == OpCall(add.pos, "add", "elemwise_add")


def test_tv06_stack_ops_leftover_and_multiline_return():
    flow = clean(TV06).flows[0]
    by_target = {s.targets[0].name: s for s in flow.body}
    assert kinds(by_target["same"]) == ["Ref"]
    assert by_target["kestrel_keeps_x"].terms[2] == StackOp(Pos(11, 9), "drop")
    assert kinds(by_target["kite_keeps_y"]) == ["Ref", "Ref", "StackOp", "StackOp"]
    assert all(s.leftover == 0 for s in flow.body)
    assert len(flow.returns) == 8 and flow.returns[-1].pos == Pos(23, 10)


def test_tv07_comparison_spelling():
    s = clean(TV07).flows[0].body[0]
    assert s.terms[2] == OpCall(s.terms[2].pos, "gt", ">")
    assert clean(TV07).flows[0].body[2].terms[0] == Num(Pos(12, 5), 1)


def test_tv09_bounded_recursion():
    p = clean(TV09)
    step, top = p.flows
    assert step.unroll == 5 and step.decorators[0].name == "unroll"
    assert kinds(step.body[1]) == ["Ref", "Ref", "FlowCall"]
    assert top.body[0].terms[2] == FlowCall(Pos(15, 9), "power_step")


def test_tv13_object_params():
    body = clean(TV13).flows[0].body
    op = body[0].terms[1]
    assert op.name == "tensor_sum" and op.param_dict() == {"axis": 0}
    assert kinds(body[0]) == ["Ref", "OpCall"]
    assert body[4].terms[1].params == ()


def test_tv14_reshape_params():
    body = clean(TV14).flows[0].body
    assert body[1].terms[1].param_dict() == {"rows": 1, "cols": 1}
    assert body[5].terms[1] == Num(Pos(15, 9), 100)


def test_ml_definitions():
    fit = clean(TV20).of(MLDef)[0]
    assert (fit.algo, fit.name, [x.name for x in fit.params]) == (
        "linear_regression", "fit", ["X", "y"])
    assert [(h.key, h.value) for h in fit.hypers] == [("iters", 400), ("lr", 5),
                                                     ("features", 2)]
    assert [r.name for r in fit.returns] == ["model", "loss"]
    sweep = clean(TV21).of(MLDef)[0]
    assert sweep.hypers[1].value == (2, 5, 10)
    assert [d.alias for d in sweep.devices] == ["vm1", "vm2"]
    hmm = clean(TV23)
    assert hmm.of(MLDef)[0].algo == "hmm"
    assert hmm.inputs[0].value.shape == (6, 8)
    empty = clean(HML + "calc::ml::naive_bayes fit(X, y) {} return model;\n")
    assert empty.of(MLDef)[0].hypers == ()


def test_device_and_status():
    p = clean(TV25 + "status::bob;\ndevice::rex { host = \"local\"; discover = true; }\n")
    bob, rex = p.of(DeviceDecl)
    assert [f.key for f in bob.fields] == ["host", "port", "user", "pass"]
    assert bob.fields[1].value == 4780 and bob.fields[3].value == EnvRef(Pos(12, 12),
                                                                          "MANED_BOB_PASS")
    assert rex.fields[1].value is True
    assert p.of(StatusDecl)[0].alias == "bob"
    assert p.flows[0].devices[0].alias == "bob"


def test_hyphenated_aliases_in_device_status_and_routes():
    """spec/wire.md §3.8: `bob-i3` is an alias in device::, status:: and @device(...); a `-`
    after any other name still starts a negative number."""
    p = clean(H0 + 'device::bob-i3 { host = "local"; }\nstatus::bob-i3;\nin::a = 1;\n'
              "calc::lambda_flow f(a) @device(bob-i3, w-2-b) {\n a a-1 add r =\n} return r;")
    assert p.of(DeviceDecl)[0].alias == "bob-i3" and p.of(StatusDecl)[0].alias == "bob-i3"
    assert [d.alias for d in p.flows[0].devices] == ["bob-i3", "w-2-b"]
    assert [t.name if hasattr(t, "name") else t for t in p.flows[0].body[0].terms][1] == "a"


def test_input_and_output_forms():
    p = clean(H0 + """in::z = 3 3 zeros;
in::d = [2,3,5] diag;
in::f = 2 2 7 full;
in::c = csv("data/train.csv");
in::e = csv();
in::m = model("house.mnm");
out::m = model("fit.mnm");
out::r = csv("r.csv");
""")
    z, d, f, c, e, m = (i.value for i in p.inputs)
    assert z == CtorInput(Pos(4, 9), (Num(Pos(4, 9), 3), Num(Pos(4, 11), 3)), "zeros",
                          Pos(4, 13))
    assert d.operands == (TensorLit(Pos(5, 9), (3,), (2, 3, 5)),) and d.ctor == "diag"
    assert f.ctor == "full" and len(f.operands) == 3
    assert c == FileInput(Pos(7, 9), "csv", "data/train.csv")
    assert e.path is None and m.kind == "model"
    assert [(o.name, o.kind, o.path) for o in p.of(OutputDecl)] == [
        ("m", "model", "fit.mnm"), ("r", "csv", "r.csv")]


def test_top_level_statements_and_print():
    p = clean(H0 + "5 3 add result =\nreturn( result 1 add );\n")
    top, pr = p.items[3:]
    assert isinstance(top, TopStatement) and top.stmt.targets[0].name == "result"
    assert isinstance(pr, PrintStatement) and kinds(pr) == ["Ref", "Num", "OpCall"]


def test_directives_and_aliases():
    p = clean("mnd::quantmax = 30000; mnd::quantmin=-30000; mnd::decimal_places=2;\n"
              "mnd::checkpoint_every = 10;\nmnd::routing_policy { x }\nmnd::foo = \"bar\";\n")
    assert p.quant.quantres == 2
    assert [(d.key, d.value) for d in p.items] == [
        ("quantmax", 30000), ("quantmin", -30000), ("decimal_places", 2),
        ("checkpoint_every", 10), ("routing_policy", None), ("foo", "bar")]


BODY = H0 + "calc::lambda_flow f(a, b, c) {{\n{}\n}} return r;\n"


def body_of(text):
    return clean(BODY.format(text)).flows[0].body


def test_body_forms():
    items = body_of("@tile {tile_m: 2, tile_m: 3}\n@prefetch\n"
                    "a b add r oc::tensor::trunc =\n"
                    "repeat(4):\n  a 2 mul a =\n  b a swap sub b =\nend\n"
                    "return(a);\na memory::write\n"
                    "a b c rot r =\n"
                    "a b tensor.init a >= r =\n"
                    "a {axis: 1.9, index: -2, sections: [1, 2]} split r =\n"
                    "a {rows: true, shape: [2,3], cols: other} reshape r =")
    s0, rep, pr, mw, rot, legacy, p1, p2 = items
    assert [d.name for d in s0.decorators] == ["tile", "prefetch"]
    assert [e.key for e in s0.decorators[0].obj] == ["tile_m", "tile_m"]
    assert s0.annotation == "oc::tensor::trunc"
    assert isinstance(rep, Repeat) and rep.count == 4 and len(rep.body) == 2
    assert pr == InertPrint(Pos(12, 1), "return") and mw.kind == "memory::write"
    assert rot.leftover == 2
    assert legacy.terms[2] == OpCall(Pos(15, 5), "tensor.init", "tensor.init")
    assert legacy.terms[4].name == "ge"
    assert [(e.key, e.value) for e in p1.terms[1].params] == [
        ("axis", 1), ("index", -2), ("sections", (1, 2))]
    assert [e.value for e in p2.terms[1].params] == [1, (2, 3), "other"]


def test_multi_target_call_and_forward_reference():
    p = clean(H0 + "calc::lambda_flow a(x) {\n x x pair p, q =\n x x pair q =\n} return p;\n"
              "calc::lambda_flow pair(x, y) { x y } return x, y;\n".replace(
                  "{ x y }", "{ x y add s =\n}"))
    s_multi, s_single = p.flows[0].body
    assert [t.name for t in s_multi.targets] == ["p", "q"] and s_multi.leftover == 0
    assert s_single.leftover == 1


def test_signature_decorators_are_kept():
    flow = clean(H0 + "@autodiff\ncalc::lambda_flow f(a) @devcie(rex) @device(bob) {\n"
                 "  a r =\n} return r;\n").flows[0]
    assert [d.name for d in flow.decorators] == ["autodiff", "devcie"]
    assert flow.decorators[1].args == ("rex",)
    assert [(d.alias, d.pos) for d in flow.devices] == [("bob", Pos(5, 45))]


def test_no_preamble_means_no_program():
    program, diags = parse("in::a = 2;\n")
    assert program is None and diags[0].code == "EPARSE"
    assert "quantization preamble" in diags[0].message and diags[0].pos == Pos(1, 1)


@pytest.mark.parametrize("typo, missing", [("quantrez", "quantres"), ("quantmn", "quantmin"),
                                           ("quant_max", "quantmax")])
def test_a_mistyped_preamble_key_is_named_with_the_one_missing(typo, missing):
    """Issue 33, point 10: the preamble's refusal names the typo that stands for the key."""
    keys = {"quantmax": 100, "quantmin": -100, "quantres": 0}
    text = "".join(f"mnd::{typo if k == missing else k}={v};\n" for k, v in keys.items())
    _, diags = parse(text + "in::a = 2;\n")
    line = list(keys).index(missing) + 1
    assert diags[0].code == "EPARSE" and diags[0].message.endswith(
        f"missing mnd::{missing} (mnd::{typo} at {line}:1: did you mean mnd::{missing}?)")
    _, far = parse(text.replace(typo, "zzz") + "in::a = 2;\n")
    assert far[0].message.endswith(f"missing mnd::{missing}")


# (snippet after the standard header, code, line, col); the header is lines 1-3.
H = H0
F = "calc::lambda_flow f(a, b) {\n"   # a body's first statement sits on line 5
END = "\n} return r;\n"
ERRORS = [
    # preamble
    ("", "mnd::quantmax=10;\n\nin::a = 1;\n", "EPARSE", 3, 1),
    ("", "", "EPARSE", 1, 1),
    ("", "mnd::quantmax=1; mnd::quantmin=5; mnd::quantres=0;\nin::a=1;", "EPARSE", 1, 18),
    ("", "mnd::quantmax=1; mnd::quantmin=-1; mnd::quantres=12;\n", "EPARSE", 1, 50),
    ("", "mnd::quantmax=1.5; mnd::quantmin=-1; mnd::quantres=2;\n", "E023", 1, 15),
    # directives
    (H, "mnd::quantrange=100;", "E010", 4, 1),
    (H, "mnd::quant=100;", "E011", 4, 1),
    (H, "mnd::register_backward(f, g);", "E011", 4, 1),
    (H, "mnd::matmul_grad = 1;", "E011", 4, 1),
    (H, "mnd::device::fpga {\n  clock = 1;\n}", "E016", 4, 1),
    (H, "mnd::foo 3;", "EPARSE", 4, 10),
    (H, "mnd::backpropagation {lr: 1} loss =", "E015", 4, 1),
    # inputs and outputs
    (H, "in::x = 0.5;", "E023", 4, 9),
    (H, "in::x = [1, 2.5];", "E023", 4, 13),
    (H, "in::x = 3000000000;", "E026", 4, 9),
    (H, "in::x = [[1, 2], [3]];", "EPARSE", 4, 9),
    (H, "in::x = [];", "EPARSE", 4, 9),
    (H, "in::x = [1, 2;", "EPARSE", 4, 14),
    (H, "in::t = text(\"notes.txt\");", "E018", 4, 9),
    (H, "in::t = parquet(\"t.parquet\");", "E018", 4, 9),
    (H, "in::t = cvs(\"t.csv\");", "EPARSE", 4, 9),
    (H, "in::n = 3 3 random;", "E025", 4, 13),
    (H, "in::y = { rows: 4, cols: 4, symmetric: true } synth;", "E025", 4, 47),
    (H, "in::s = [2,3,5] from_spectrum;", "E025", 4, 17),
    (H, "in::v = f.values;", "E025", 4, 9),
    (H, "in::p = ds cols(\"a\");", "E025", 4, 9),
    (H, "in::z = 3 zeros;", "EPARSE", 4, 11),
    (H, "in::z = 3 3 zerox;", "EPARSE", 4, 13),
    (H, "in::add = 3;", "EPARSE", 4, 1),
    (H, "out::xt = parquet(\"t.parquet\");", "E018", 4, 11),
    (H, "out::xt = csv();", "EPARSE", 4, 15),
    # out-of-scope statements
    (H, "frame::f = jsonl(\"d.jsonl\");", "E025", 4, 1),
    (H, "profile::spd;", "E025", 4, 1),
    (H, "tensor::pack(\"w/\", \"p/\", bits=auto);", "E025", 4, 1),
    (H, "x memory::write", "E025", 4, 3),
    # devices
    (H, "device::bob {\n  host = 5.5;\n}", "EPARSE", 5, 10),
    (H, "device::bob {\n  host = \"h\";\n", "EPARSE", 4, 1),
    # definitions
    (H, "calc::lambda_symphony s(a) {\n a b c =\n} return c;", "E013", 4, 1),
    (H, "calc::lambda_calculator(channels=2) {\n}", "E014", 4, 1),
    (H, "calc::lambda_flw f(a) { a r = } return r;", "E009", 4, 1),
    (H, "calc::ml::foo fit(X, y) {} return model;", "E021", 4, 1),
    (H, "calc::ml:: fit(X, y) {} return model;", "E021", 4, 1),
    (H, "calc::ml::linear_regression fit(X,y) { lr: 0.05, features: 2 } return model;",
     "E022", 4, 44),
    (H, "calc::ml::linear_regression fit(X,y) { lr: [[1]] } return model;", "E022", 4, 45),
    (H, "calc::ml::linear_regression fit(X,y) { lr: [1, 0.5] } return model;", "E022", 4, 48),
    (H, "calc::ml::linear_regression fit(X,y) { lr 5 } return model;", "E022", 4, 40),
    (H, "calc::ml::linear_regression fit(X,y) { lr: 5 }\nin::a = 1;", "E022", 5, 1),
    (H, F + "  a b add r =\n}\nin::a = 1;", "EPARSE", 7, 1),
    (H, F + "  a b add r =\n} return r\nin::a = 1;", "EPARSE", 6, 11),
    (H, F + "  a b add r =\n\ncalc::lambda_flow g(a) {\n a r =\n} return r;", "EPARSE", 4, 27),
    (H, "@unroll(0)\ncalc::lambda_flow f(a) {\n a r =\n} return r;", "EPARSE", 4, 1),
    (H, "@unroll(5)\nin::a = 1;", "EPARSE", 4, 1),
    (H, "calc::lambda_flow add(a) {\n a r =\n} return r;", "EPARSE", 4, 19),
    (H, "calc::lambda_flow f(dup) {\n dup r =\n} return r;", "EPARSE", 4, 21),
    (H, "calc::lambda_flow f(a) @device() {\n a r =\n} return r;", "EPARSE", 4, 24),
    (H, "calc::lambda_flow f(a) @device(x y) {\n a r =\n} return r;", "EPARSE", 4, 34),
    # bodies: classification and stack depth
    (H, F + "  a b => add r =" + END, "E017", 5, 7),
    (H, F + "  lambda x end r =" + END, "E017", 5, 3),
    (H, F + "  a kestrel r =" + END, "E017", 5, 5),
    (H, F + "  a owl r =" + END, "E017", 5, 5),
    (H, "a kestrel r =", "E017", 4, 3),
    (H, F + "  a mnd::backpropagation {lr: 1} r =" + END, "E015", 5, 5),
    (H, F + "  a[0] r =" + END, "E006", 5, 3),
    (H, F + "  r.eigenvalues r =" + END, "E006", 5, 3),
    (H, F + "  a 0.5 mul r =" + END, "E023", 5, 5),
    (H, F + "  a 3000000000 mul r =" + END, "E026", 5, 5),
    (H, F + "  a [1, 2.5] mul r =" + END, "E023", 5, 9),
    (H, F + "  3 3 zeros r =" + END, "EPARSE", 5, 7),
    (H, F + "  3 3 random r =" + END, "E025", 5, 7),
    (H, F + "  a profile_vector r =" + END, "E025", 5, 5),
    (H, F + "  a matmul r =" + END, "EPARSE", 5, 5),
    (H, F + "  a swap r =" + END, "EPARSE", 5, 5),
    (H, F + "  r =" + END, "EPARSE", 5, 5),
    (H, F + "  a b add" + END, "EPARSE", 5, 7),
    (H, F + "  a b add add =" + END, "EPARSE", 5, 11),
    (H, F + "  a b add r, s =" + END, "EPARSE", 5, 11),
    (H, F + "  a {axis: 0} r =" + END, "EPARSE", 5, 5),
    (H, F + "  a {strid: 1} tensor_sum r =" + END, "EPARSE", 5, 6),
    (H, F + "  {axis: 0} a tensor_sum r =" + END, "EPARSE", 5, 3),
    (H, F + "  repeat(a):\n  a r =\n  end" + END, "E019", 5, 10),
    (H, F + "  repeat(0):\n  a r =\n  end" + END, "E019", 5, 10),
    (H, F + "  repeat(257):\n  a r =\n  end" + END, "E019", 5, 10),
    (H, F + "  repeat(2, 3):\n  a r =\n  end" + END, "E019", 5, 10),
    (H, F + "  repeat(2):\n  repeat(2):\n  a r =\n  end\n  end" + END, "EPARSE", 6, 3),
    (H, F + "  repeat(2):\n  a r =" + END, "EPARSE", 5, 3),
    (H, F + "  end" + END, "EPARSE", 5, 3),
    (H, F + "  @clock(1):\n  a r =" + END, "E025", 5, 3),
    (H, F + "  @tile {tile_m: 2}" + END, "EPARSE", 5, 3),
    (H, F + "  return a" + END, "EPARSE", 5, 3),
    (H, F + "  a b f r =" + END, "EPARSE", 5, 7),
    (H, "calc::lambda_flow f(a) {\n a g r =\n} return r;\n"
        "calc::lambda_flow g(a) {\n a f r =\n} return r;", "EPARSE", 4, 1),
    (H, "return(a b c);\nreturn();", "EPARSE", 5, 1),
]


@pytest.mark.parametrize("header, snippet, code, line, col", ERRORS,
                         ids=[f"{e[2]}-{i}" for i, e in enumerate(ERRORS)])
def test_error_table(header, snippet, code, line, col):
    _, diags = parse(header + snippet)
    assert diags, "no diagnostic"
    d = diags[0]
    assert (d.code, d.pos) == (code, Pos(line, col)), d


def test_messages_verbatim():
    def msg(snippet):
        return parse(H0 + snippet)[1][0].message
    assert msg(F + " a kestrel r =" + END) == (
        "combinator 'kestrel' in a flow body is not executable yet (lambda expressions are "
        "not accepted inside a flow body). Use the postfix stack-op spelling instead.")
    assert msg("a kestrel r =") == ("combinator 'kestrel' is not reachable from this "
                                    "context; it is implemented as a λ-term only")
    assert msg(F + " a owl r =" + END) == "'owl' is reserved but has no implementation"
    assert msg(F + " x => x r =" + END).startswith("lambda expressions (x => body / lambda")
    assert msg(F + " repeat(a):\n end" + END) == ("repeat takes one integer count 1..256, "
                                                  "as in repeat(8):")
    assert msg(F + " a matmul r =" + END) == "'matmul' needs 2 operands, the stack holds 1"
    assert "did you mean 'axis'" in msg(F + " a {axs: 0} tensor_sum r =" + END)
    for algo in ("linear_regression", "hmm", "pca", "xgboost"):
        assert algo in msg("calc::ml::foo fit(X) {} return m;")
    assert "3000000000" in msg("in::x = 3000000000;")
    assert "text" in msg("in::t = text(\"a\");")
    assert "recursion in 'f'" in msg(F + " a b f r =" + END)


def test_recovery_reports_several_errors():
    text = H0 + F + "  a matmul r =\n  a kestrel s =\n  a b add r =" + END + \
        "in::x = 0.5;\nin::y = 2;\n"
    program, diags = parse(text)
    assert [d.code for d in diags] == ["EPARSE", "E017", "E023"]
    assert program is not None and [i.name for i in program.inputs] == ["y"]


# --- robustness ---------------------------------------------------------------------------

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))


def assert_total(text):
    _, diags = parse(text)
    for d in diags:
        assert d.code in LEDGER and d.pos is not None and d.pos.line >= 1 and d.pos.col >= 1


@FUZZ
@given(st.text(max_size=300))
def test_random_text_never_raises(text):
    assert_total(text)


@FUZZ
@given(st.binary(max_size=300))
def test_random_bytes_never_raise(data):
    assert_total(data.decode("utf-8", errors="replace"))


PIECES = list("{}[]():,;=@#\"'-.<>!\n \tax019") + [
    "calc::lambda_flow ", "repeat(2):", "end", "return", "mnd::", "in::", "=>", "kestrel",
    "dup", "add", "matmul", "{axis: 0}", "@unroll(2)", "\n}", "csv(", "3.5", "99999999999"]
SOURCES = [TV01, TV06, TV09, TV13, TV21, TV25]


@FUZZ
@given(st.sampled_from(SOURCES), st.lists(st.tuples(
    st.integers(0, 2), st.floats(0, 1), st.sampled_from(PIECES), st.integers(1, 30)),
    min_size=1, max_size=6))
def test_mutated_scripts_never_raise(source, edits):
    s = source
    for kind, where, piece, length in edits:
        i = int(where * len(s))
        if kind == 0:
            s = s[:i] + piece + s[i:]
        elif kind == 1:
            s = s[:i] + s[i + length:]
        else:
            s = s[:i] + s[i:i + length] + s[i:]
    assert_total(s)


def test_a_missing_semicolon_after_the_return_clause_says_what_was_expected():
    _, diags = parse(H0 + "calc::lambda_flow f(a) {\n  a a add r =\n} return r\nin::a = 1;\n")
    assert [(d.code, str(d.pos), d.message) for d in diags][:1] == [
        ("EPARSE", "6:11", "expected ',' or ';' after 'r' in the return clause of flow 'f', "
                           "found end of line")]


# A syntax-tree value behaves as the frozen dataclass it replaced (issue 35: start-up).
def _twin(kind):
    """The frozen dataclass a Node class stands for: same name, fields and defaults."""
    import dataclasses
    fields = [(n, object, dataclasses.field(default=kind.__dict__[n])) if n in kind.__dict__
              else (n, object) for n in kind._fields]
    return dataclasses.make_dataclass(kind.__name__, fields, frozen=True)


@settings(max_examples=60, deadline=None)
@given(line=st.integers(1, 9), col=st.integers(1, 9), name=st.sampled_from(["a", "b"]),
       other=st.sampled_from(["a", "b"]), spelling=st.sampled_from(["add", "plus"]))
def test_syntax_tree_values_equal_hash_and_print_as_frozen_dataclasses(line, col, name, other,
                                                                       spelling):
    import pickle
    from maned.lang.ast import Ref
    pos = Pos(line, col)
    for kind, args, others in ((Ref, (pos, name), (pos, other)),
                               (OpCall, (pos, name, spelling), (pos, other, "add"))):
        twin = _twin(kind)
        ours, theirs = kind(*args), twin(*args)
        assert repr(ours) == repr(theirs)
        assert (ours == kind(*others)) == (theirs == twin(*others))
        assert hash(ours) == hash(theirs)
        assert ours == kind(**dict(zip(kind._fields, args)))
        assert pickle.loads(pickle.dumps(ours)) == ours
        with pytest.raises(AttributeError):
            ours.pos = Pos(1, 1)
    assert Ref(pos, name) != Num(pos, 0) and Ref(pos, name) != (pos, name)
    assert OpCall(pos, name, spelling).params == ()       # the class body's default


@pytest.mark.parametrize("args, kwargs, why", [
    ((Pos(1, 1),), {}, "missing the field 'name'"),
    ((Pos(1, 1), "a", "extra"), {}, "takes 2 fields, 3 given"),
    ((Pos(1, 1), "a"), {"name": "b"}, "unexpected or repeated field 'name'"),
    ((Pos(1, 1), "a"), {"spelling": "b"}, "unexpected or repeated field 'spelling'"),
])
def test_a_syntax_tree_value_refuses_wrong_fields(args, kwargs, why):
    from maned.lang.ast import Ref
    with pytest.raises(TypeError, match=why):
        Ref(*args, **kwargs)
