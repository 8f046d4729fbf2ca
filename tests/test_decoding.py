"""Hand-worked checks of ``Decoding.probabilities`` on small logit vectors."""

import math

import pytest
import torch

from varprobe.sampling.decoding import Decoding


def logits_of(*probs: float) -> torch.Tensor:
    """Logits ``(1, V)`` whose softmax is ``probs``."""
    return torch.tensor([probs], dtype=torch.float64).log()


def close(actual: torch.Tensor, expected) -> None:
    torch.testing.assert_close(actual, torch.tensor([expected], dtype=torch.float64))


# ---- ancestral sampling and temperature -------------------------------------------------------


def test_default_is_plain_softmax_in_float64():
    logits = torch.tensor([[1.0, 2.0, 3.0, 0.0], [0.0, 0.0, 0.0, 5.0]])
    probs = Decoding("ancestral").probabilities(logits)
    assert probs.dtype == torch.float64 and probs.shape == logits.shape
    torch.testing.assert_close(probs, torch.softmax(logits.double(), dim=-1))
    torch.testing.assert_close(probs.sum(-1), torch.ones(2, dtype=torch.float64))


def test_default_by_hand():
    # softmax([0, ln 3]) = [1/4, 3/4]
    close(Decoding("a").probabilities(torch.tensor([[0.0, math.log(3)]])), [0.25, 0.75])


def test_temperature_half_is_softmax_of_doubled_logits():
    logits = torch.tensor([[1.0, 2.0, 3.0, 0.0]])
    probs = Decoding("cold", temperature=0.5).probabilities(logits)
    torch.testing.assert_close(probs, torch.softmax(2 * logits.double(), dim=-1))
    # by hand for two tokens: logits [0, ln 3] / 0.5 = [0, ln 9] -> [1/10, 9/10]
    two = Decoding("cold", temperature=0.5).probabilities(torch.tensor([[0.0, math.log(3)]]))
    close(two, [0.1, 0.9])


def test_high_temperature_flattens():
    probs = Decoding("hot", temperature=1e6).probabilities(torch.tensor([[0.0, 10.0, -10.0]]))
    assert probs[0].tolist() == pytest.approx([1 / 3] * 3, abs=1e-4)  # logits / T differ by 1e-5


# ---- top-k --------------------------------------------------------------------------------------


def test_top_k_keeps_the_k_largest_renormalised():
    logits = torch.tensor([[1.0, 3.0, 2.0, 0.0]])
    e3, e2 = math.exp(3), math.exp(2)
    close(Decoding("k2", top_k=2).probabilities(logits), [0.0, e3 / (e3 + e2), e2 / (e3 + e2), 0.0])


def test_top_k_one_is_greedy_and_k_at_least_vocab_is_everything():
    logits = torch.tensor([[1.0, 3.0, 2.0, 0.0]])
    close(Decoding("greedy", top_k=1).probabilities(logits), [0.0, 1.0, 0.0, 0.0])
    full = torch.softmax(logits.double(), dim=-1)
    for k in (4, 100):
        torch.testing.assert_close(Decoding("k", top_k=k).probabilities(logits), full)


def test_top_k_applies_per_row():
    logits = torch.tensor([[1.0, 3.0, 2.0], [5.0, 0.0, 1.0]])
    probs = Decoding("k1", top_k=1).probabilities(logits)
    torch.testing.assert_close(probs, torch.tensor([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]], dtype=torch.float64))


# ---- top-p (nucleus) ----------------------------------------------------------------------------
# Definition (as implemented): sort by probability; token i is kept iff the mass of the tokens
# ranked before it is < p, i.e. the kept set is the smallest prefix whose mass reaches (>=) p,
# and it always holds at least the most probable token.


@pytest.mark.parametrize(
    "top_p, expected",
    [
        # probs .5 .3 .15 .05; mass before each token: 0, .5, .8, .95
        (1e-9, [1.0, 0.0, 0.0, 0.0]),  # at least one token
        (0.4, [1.0, 0.0, 0.0, 0.0]),  # .5 already reaches .4
        (0.75, [0.5 / 0.8, 0.3 / 0.8, 0.0, 0.0]),  # .5 < .75, .5 + .3 = .8 reaches it
        (0.79, [0.5 / 0.8, 0.3 / 0.8, 0.0, 0.0]),
        (0.81, [0.5 / 0.95, 0.3 / 0.95, 0.15 / 0.95, 0.0]),  # .8 < .81: the third is needed
        (0.96, [0.5, 0.3, 0.15, 0.05]),  # .95 < .96: all four
    ],
)
def test_top_p_keeps_smallest_set_reaching_p(top_p, expected):
    close(Decoding("nucleus", top_p=top_p).probabilities(logits_of(0.5, 0.3, 0.15, 0.05)), expected)


def test_top_p_exact_boundary_reaching_p_is_enough():
    # Four equally likely tokens: softmax gives exactly .25 each, so the masses before the
    # ranked tokens are exactly 0, .25, .5, .75. (The .5 + .3 = .8 example above is not exact
    # in floating point: computed from float64 logits the mass before the third token comes
    # out as 0.7999999999999999, so the boundary is tested on exact values here.)
    # p = .5: two tokens reach .5 exactly -> the third (mass before = .5 >= .5) is dropped.
    logits = torch.zeros(1, 4)
    kept = Decoding("nucleus", top_p=0.5).probabilities(logits)
    assert int((kept > 0).sum()) == 2
    torch.testing.assert_close(kept[kept > 0], torch.tensor([0.5, 0.5], dtype=torch.float64))
    assert int((Decoding("n", top_p=0.75).probabilities(logits) > 0).sum()) == 3
    assert int((Decoding("n", top_p=0.25).probabilities(logits) > 0).sum()) == 1
    assert int((Decoding("n", top_p=0.5 + 1e-9).probabilities(logits) > 0).sum()) == 3


def test_top_p_maps_back_to_the_original_token_order():
    # The same distribution as above, tokens permuted: .15 .05 .5 .3
    probs = Decoding("nucleus", top_p=0.75).probabilities(logits_of(0.15, 0.05, 0.5, 0.3))
    close(probs, [0.0, 0.0, 0.5 / 0.8, 0.3 / 0.8])


def test_top_k_applies_before_top_p():
    # top_k=3 renormalises .5 .3 .15 to .526 .316 .158 (masses before: 0, .526, .842), so
    # top_p=.83 then keeps two tokens. Nucleus alone would keep three (.8 < .83).
    logits = logits_of(0.5, 0.3, 0.15, 0.05)
    both = Decoding("k3p83", top_k=3, top_p=0.83).probabilities(logits)
    close(both, [0.5 / 0.8, 0.3 / 0.8, 0.0, 0.0])
    alone = Decoding("p83", top_p=0.83).probabilities(logits)
    close(alone, [0.5 / 0.95, 0.3 / 0.95, 0.15 / 0.95, 0.0])


# ---- typical sampling ---------------------------------------------------------------------------
# probs p = [1/2, 1/4, 1/8, 1/8]; in units of ln 2:
#   surprisals -log p = [1, 2, 3, 3]
#   entropy H = 1/2*1 + 1/4*2 + 1/8*3 + 1/8*3 = 1.75
#   |-log p - H| = [0.75, 0.25, 1.25, 1.25]
# so the typicality order is token 1 (p=1/4), token 0 (p=1/2), then tokens 2 and 3 (tied).
# Masses before each in that order: token 1: 0, token 0: .25, tokens 2/3: .75 and .875.
TYPICAL = (0.5, 0.25, 0.125, 0.125)


def test_typical_small_mass_keeps_the_most_typical_not_the_most_probable():
    # typical_p = .2: token 1 (mass before 0) is kept; token 0 (mass before .25 >= .2) is not.
    close(Decoding("typ", typical_p=0.2).probabilities(logits_of(*TYPICAL)), [0.0, 1.0, 0.0, 0.0])


@pytest.mark.parametrize("typical_p", [0.3, 0.5, 0.7])
def test_typical_keeps_two(typical_p):
    # .25 < p <= .75: tokens 1 and 0 (mass .75) -> renormalised [.5/.75, .25/.75]
    probs = Decoding("typ", typical_p=typical_p).probabilities(logits_of(*TYPICAL))
    close(probs, [2 / 3, 1 / 3, 0.0, 0.0])


def test_typical_with_tied_tail():
    # typical_p = .8: tokens 1, 0 and one of the tied tokens 2/3 (mass before .75 < .8); the
    # other one has mass .875 before it and is dropped.
    probs = Decoding("typ", typical_p=0.8).probabilities(logits_of(*TYPICAL))[0]
    torch.testing.assert_close(probs[:2], torch.tensor([0.5, 0.25], dtype=torch.float64) / 0.875)
    assert sorted(probs[2:].tolist()) == pytest.approx([0.0, 0.125 / 0.875])


def test_typical_three_tokens_by_hand():
    # p = [.7, .2, .1]: H = -(.7 ln .7 + .2 ln .2 + .1 ln .1) = .2497 + .3219 + .2303 = .8018
    # -log p = [.3567, 1.6094, 2.3026]; |-log p - H| = [.4452, .8076, 1.5008]
    # order 0, 1, 2; masses before: 0, .7, .9. typical_p = .85 keeps tokens 0 and 1.
    p = torch.tensor([0.7, 0.2, 0.1], dtype=torch.float64)
    entropy = -(p * p.log()).sum()
    assert entropy.item() == pytest.approx(0.8018, abs=1e-4)
    assert (-p.log() - entropy).abs().tolist() == pytest.approx([0.4452, 0.8076, 1.5008], abs=1e-4)
    close(Decoding("typ", typical_p=0.85).probabilities(p.log()[None]), [0.7 / 0.9, 0.2 / 0.9, 0.0])


def test_typical_after_top_k_handles_removed_tokens():
    # top_k leaves -inf scores; typical's entropy must ignore them (0 * -inf is no NaN).
    probs = Decoding("k2typ", top_k=2, typical_p=0.9).probabilities(logits_of(0.4, 0.3, 0.2, 0.1))
    assert torch.isfinite(probs).all()
    assert probs[0, 2:].tolist() == [0.0, 0.0]
    assert probs.sum().item() == pytest.approx(1.0)


def test_everything_at_one_is_softmax():
    logits = torch.randn(3, 50, generator=torch.Generator().manual_seed(0))
    probs = Decoding("all", temperature=1.0, top_k=0, top_p=1.0, typical_p=1.0).probabilities(logits)
    torch.testing.assert_close(probs, torch.softmax(logits.double(), dim=-1))


# ---- validation and parameters ------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, parameter",
    [
        ({"temperature": 0.0}, "temperature"),
        ({"temperature": -1.0}, "temperature"),
        ({"temperature": float("nan")}, "temperature"),
        ({"top_k": -1}, "top_k"),
        ({"top_p": 0.0}, "top_p"),
        ({"top_p": 1.5}, "top_p"),
        ({"top_p": float("nan")}, "top_p"),
        ({"typical_p": 0.0}, "typical_p"),
        ({"typical_p": 1.01}, "typical_p"),
        ({"typical_p": -0.5}, "typical_p"),
    ],
)
def test_invalid_parameters_raise_naming_the_parameter(kwargs, parameter):
    with pytest.raises(ValueError, match=parameter) as err:
        Decoding("bad", **kwargs)
    assert "'bad'" in str(err.value)


def test_parameters_returns_all_effective_values():
    assert Decoding("ancestral").parameters() == {
        "temperature": 1.0, "top_k": 0, "top_p": 1.0, "typical_p": 1.0,
    }
    assert Decoding("mix", temperature=0.7, top_k=50, top_p=0.9, typical_p=0.95).parameters() == {
        "temperature": 0.7, "top_k": 50, "top_p": 0.9, "typical_p": 0.95,
    }


def test_from_config_reads_a_config_entry_and_leaves_enumeration_and_sampling_keys_to_their_jobs():
    assert Decoding.from_config({"name": "top-p-0.9", "top_p": 0.9}) == Decoding("top-p-0.9", top_p=0.9)
    assert Decoding.from_config({"name": "many", "n_samples": 1000}) == Decoding("many")
    exact = {"name": "exact", "method": "enumerate", "target_mass": 0.9, "max_forward_tokens": 300,
             "min_mass": 1e-6, "temperature": 0.5}
    assert Decoding.from_config(exact) == Decoding("exact", temperature=0.5)
    with pytest.raises(ValueError, match=r"'odd'.*unknown keys \['top_q'\]"):
        Decoding.from_config({"name": "odd", "top_q": 0.5})


def _keep_mass_by_full_sort(scores, priority, mass):
    """The definition, ranking the whole vocabulary."""
    order = torch.argsort(priority, dim=-1, descending=True)
    probs = torch.softmax(scores, dim=-1).gather(-1, order)
    drop = torch.zeros_like(probs, dtype=torch.bool).scatter(-1, order, probs.cumsum(-1) - probs >= mass)
    return scores.masked_fill(drop, -torch.inf)


@pytest.mark.parametrize("spread", [0.01, 1.0, 8.0])
@pytest.mark.parametrize("kind", ["top_p", "typical_p"])
def test_partial_ranking_keeps_what_a_full_sort_keeps(spread, kind, monkeypatch):
    """A 262k-token vocabulary is ranked in part (``KEEP_MASS_FIRST`` tokens, then 4x more while
    a row needs it): near-flat rows (spread 0.01, where top-p 0.9 keeps ~236k tokens) and peaked
    ones keep exactly the tokens of the full sort."""
    from varprobe.sampling import decoding as module

    logits = torch.randn(3, 262_144, generator=torch.Generator().manual_seed(0), dtype=torch.float64) * spread
    chosen = Decoding("d", **{kind: 0.9})
    got = chosen.probabilities(logits)
    monkeypatch.setattr(module, "_keep_mass", _keep_mass_by_full_sort)
    expected = chosen.probabilities(logits)
    assert torch.equal(got > 0, expected > 0)
    torch.testing.assert_close(got, expected, rtol=1e-12, atol=0)
    assert (got > 0).sum(-1).min() > (module.KEEP_MASS_FIRST if spread == 0.01 else 0)


@pytest.mark.parametrize("settings", [{}, {"top_k": 40}, {"temperature": 0.7}, {"top_p": 0.9},
                                      {"typical_p": 0.9}, {"top_k": 40, "temperature": 1.5}])
def test_float32_logits_give_the_bits_of_float64_throughout(settings):
    """Ancestral sampling and top-k cast float32 logits to float64 in the softmax, the other
    decodings first: either way the distribution has the bits of casting the logits first."""
    logits = torch.randn(5, 4096, generator=torch.Generator().manual_seed(1)) * 4
    chosen = Decoding("d", **settings)
    assert torch.equal(chosen.probabilities(logits), chosen.probabilities(logits.double()))
    # The engine reads the leading rows of a pass in place (a view), not gathered.
    assert torch.equal(chosen.probabilities(logits[:3]), chosen.probabilities(logits[torch.tensor([0, 1, 2])]))
