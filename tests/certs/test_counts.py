"""The spec's complexity claims, measured: operations / ((n+M) log2^2(n+M)) and peak
words / (n+M) do not grow from 32 to 4096 (Cauchy product tree and S4 filter)."""
import pytest

from s4cert.certs.counts import count_cauchy, count_filter, scaling_table

SIZES = [32, 128, 512, 4096]


@pytest.mark.parametrize("kind", ["cauchy", "filter"])
def test_counts_do_not_grow(kind):
    rows = scaling_table(kind, SIZES)
    first = rows[0]
    for row in rows[1:]:
        assert row.ops_ratio <= first.ops_ratio, (kind, row.size, row.ops_ratio, first.ops_ratio)
        assert row.words_ratio <= first.words_ratio, (kind, row.size, row.words_ratio, first.words_ratio)


def test_counts_are_measured_not_formulas():
    """Different inputs of the same size give the same counts (the route is fixed by the
    sizes), and more poles cost more."""
    a, b = count_cauchy(64, 64, seed=1), count_cauchy(64, 64, seed=2)
    assert a == b
    assert count_cauchy(65, 64)["ops"] > a["ops"]
    assert count_filter(16, 16, r=2)["ops"] > count_filter(16, 16, r=1)["ops"]


# -- both cost claims: counts over eps and routes, the normalizations, the fit ----------

import json
import math

import numpy as np

from s4cert.certs.count_fit import fit_counts
from s4cert.certs.counts import ROW_KEYS, count_model, count_rows, model_kappa

from .cli_run import s4cert

EPS = [1e-3, 1e-12, 1e-30]


def _rows(N, L, cauchy):
    m, step, ct = count_model(N)
    return count_rows(m, step, L, ct, EPS, cauchy, model_kappa(m, step, L, ct))


def test_arc_counts_grow_with_log_inv_eps_as_their_orders_do():
    rows = _rows(16, 1024, "fast")
    orders = [r["orders"]["p"] for r in rows]
    assert orders == sorted(orders) and orders[0] < orders[-1]
    ops = [r["ops"] for r in rows]
    assert ops[0] < ops[1] < ops[2], ops


def test_exact_routes_counts_do_not_depend_on_eps():
    for cauchy in ("tree", "direct"):
        rows = _rows(16, 256, cauchy)
        assert len({(r["ops"], r["peak_words"], r["mul"], r["div"]) for r in rows}) == 1, cauchy
        assert rows[0]["norm_eps"] > rows[1]["norm_eps"] > rows[2]["norm_eps"]


def test_normalizations_are_the_formulas_of_the_raw_counts():
    for r in _rows(8, 64, "tree"):
        s = r["N"] + r["L"]
        assert r["norm_exact"] == r["ops"] / (s * math.log2(s) ** 2)
        assert math.isclose(r["norm_eps"], r["ops"] / (s * math.log2(s) * math.log2(r["kappa"] / r["eps"])),
                            rel_tol=1e-12)
        assert r["norm_words"] == r["peak_words"] / s
        assert r["ops"] == sum(r[k] for k in ("add", "mul", "div", "zero_test", "conj"))
        assert set(ROW_KEYS) <= set(r)


def test_fit_recovers_a_known_law_and_is_least_squares():
    """Counts made by ops = s^1.3 (5 + 0.25 x): the fit returns those numbers; on noisy
    counts the fitted (alpha, a, c) beat nearby values (the relative squared error)."""
    g = np.random.default_rng(3)
    rows = [{"N": N, "L": L, "eps": e, "kappa": 1e6} for N in (16, 64) for L in (256, 1024, 4096) for e in EPS]
    for r in rows:
        r["ops"] = (r["N"] + r["L"]) ** 1.3 * (5 + 0.25 * math.log2(r["kappa"] / r["eps"]))
    f = fit_counts(rows)
    assert abs(f["alpha"] - 1.3) < 1e-6 and abs(f["a"] - 5) < 1e-4 and abs(f["c"] - 0.25) < 1e-5
    assert f["residual"] < 1e-8
    for r in rows:
        r["ops"] *= 1 + 0.1 * g.standard_normal()
    f = fit_counts(rows)

    def cost(al, a, c):
        return sum(((r["ops"] - (r["N"] + r["L"]) ** al * (a + c * math.log2(r["kappa"] / r["eps"]))) / r["ops"]) ** 2
                   for r in rows)
    best = cost(f["alpha"], f["a"], f["c"])
    assert math.isclose(math.sqrt(best / len(rows)), f["residual"], rel_tol=1e-9)
    for d in ((0.01, 0, 0), (-0.01, 0, 0), (0, 0.05, 0), (0, 0, 0.005), (0, 0, -0.005)):
        assert cost(f["alpha"] + d[0], f["a"] + d[1], f["c"] + d[2]) > best


def test_too_few_rows_fit_nothing():
    f = fit_counts([{"N": 4, "L": 16, "eps": 1e-3, "kappa": 100.0, "ops": 10}])
    assert f["alpha"] is None and f["residual"] is None and "rows" in f["reason"]


def test_count_command_json_has_the_issue_keys():
    p = s4cert("count", "-N", "8", "-L", "32,64", "--eps", "1e-3,1e-9", "--cauchy", "fast", "--json")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert [tuple(r) for r in doc["rows"]] == [ROW_KEYS] * 4
    assert [(r["L"], r["eps"]) for r in doc["rows"]] == [(32, 1e-3), (32, 1e-9), (64, 1e-3), (64, 1e-9)]
    assert doc["fit"]["residual"] is not None and doc["fit"]["rows"] == 4


# -- the a-priori certificate alone ---------------------------------------------------------

CERT_KEYS = ("T0", "V0", "D0", "log2_K0", "log2_u", "precision_bits", "circuit_cauchy")


def test_certificate_only_is_the_full_runs_certificate():
    from s4cert.certs.circuit_certificate import certify_circuit
    from s4cert.certs.examples import example_model
    from s4cert.certs.kernel import certify_kernel

    cases = [(example_model(4), 0.01, 16), (example_model(4, r=2, seed=1), 0.01, 32), (example_model(2, seed=2), 0.5, 8)]
    for model, step, L in cases:
        full = certify_kernel(model, step, L, 1e-12, mode="a-priori").certificate
        alone = certify_circuit(model, step, L, 1e-12)
        assert {k: alone[k] for k in CERT_KEYS} == {k: full[k] for k in CERT_KEYS}
        assert alone["a_posteriori_bits"] < alone["precision_bits"]


def test_certificate_only_command():
    p = s4cert("kernel", "--mode", "a-priori", "--certificate-only", "-N", "4", "-L", "16", "--json")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert tuple(doc) == CERT_KEYS + ("a_posteriori_bits",) and doc["precision_bits"] == -doc["log2_u"]
    p = s4cert("kernel", "--certificate-only", "-N", "4", "-L", "16")
    assert p.returncode == 2 and "a-priori" in p.stderr
