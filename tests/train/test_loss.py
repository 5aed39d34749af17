import torch

from graphtx.train.loss import allowed_negatives, contrastive_loss, triplet_loss


def _unit(*rows):
    return torch.nn.functional.normalize(torch.tensor(rows, dtype=torch.float32), dim=-1)


def test_hardest_negative_hand_computed():
    a = _unit([1, 0])
    c = _unit([1, 0.2], [1, 0.1], [0, 1])  # positive, a near negative, a far negative
    loss, denom, active = triplet_loss(
        a, c, torch.tensor([0]), torch.tensor([[False, True, True]]), torch.tensor([0.1])
    )
    d_pos = 1 - c[0, 0]
    d_neg = 1 - c[1, 0]
    assert torch.isclose(loss, (d_pos - d_neg + 0.1).clamp(min=0)) and denom == 1 and active == 1


def test_known_positives_never_negatives():
    allowed = allowed_negatives(["A", "B"], ["X", "Y", "A"], {"A": {"A", "X", "Y"}, "B": {"B", "Y"}})
    assert allowed.tolist() == [[False, False, False], [True, False, True]]
    a = _unit([1, 0])
    c = _unit([1, 0], [1, 0.01])
    loss, denom, _ = triplet_loss(a, c, torch.tensor([0]), torch.tensor([[False, False]]), torch.tensor([0.3]))
    assert loss == 0 and denom == 0  # no negative: the anchor is not counted


def test_semihard_prefers_negative_beyond_positive():
    a = _unit([1, 0])
    c = _unit([1, 0.3], [1, 0.1], [1, 0.5])  # positive; a negative closer than it; one just beyond
    allowed = torch.tensor([[False, True, True]])
    hard, _, _ = triplet_loss(a, c, torch.tensor([0]), allowed, torch.tensor([0.2]), mining="hardest")
    semi, _, _ = triplet_loss(a, c, torch.tensor([0]), allowed, torch.tensor([0.2]), mining="semihard")
    d = 1 - (c @ a.T).squeeze(1)
    assert torch.isclose(hard, d[0] - d[1] + 0.2) and torch.isclose(semi, d[0] - d[2] + 0.2)


def test_all_mining_counts_active_triplets_and_l2():
    a = _unit([1, 0], [0, 1])
    c = _unit([1, 0], [0, 1])
    allowed = torch.tensor([[False, True], [True, False]])
    loss, denom, active = triplet_loss(a, c, torch.tensor([0, 1]), allowed, torch.tensor([0.5, 0.5]), mining="all")
    assert loss == 0 and active == 0  # positives at 0, negatives at distance 1 > margin
    loss, denom, active = triplet_loss(
        a, c, torch.tensor([0, 1]), allowed, torch.tensor([2.0, 2.0]), distance="l2", mining="all"
    )
    assert active == 2 and torch.isclose(loss / denom, torch.tensor(2.0 - 2**0.5))


def test_gradient_pulls_positive_closer():
    a = _unit([1, 0]).requires_grad_()
    c = _unit([0.6, 0.8], [0.8, 0.6])
    loss, denom, _ = triplet_loss(a, c, torch.tensor([0]), torch.tensor([[False, True]]), torch.tensor([0.5]))
    (loss / denom).backward()
    step = -a.grad[0]
    assert step @ (c[0] - c[1]) > 0  # descent moves the anchor toward the positive, away from the negative


def test_contrastive_loss_hand_computed_and_known_positives_left_out():
    import math

    a = _unit([1, 0])
    c = _unit([1, 0.2], [1, 0.1], [0, 1], [1, 0])  # positive; two negatives; a known positive (not allowed)
    allowed = torch.tensor([[False, True, True, False]])
    loss, denom, active = contrastive_loss(a, c, torch.tensor([0]), allowed, temperature=0.1)
    s = (a @ c.T)[0] / 0.1
    expected = -(s[0] - torch.logsumexp(s[:3], 0))  # column 3 is no class: a known positive is never a negative
    assert torch.isclose(loss, expected) and denom == 1 and active == 1
    # no negative at all: the anchor is not counted
    loss, denom, _ = contrastive_loss(a, c, torch.tensor([0]), torch.zeros(1, 4, dtype=torch.bool))
    assert loss == 0 and denom == 0
    # a far negative costs almost nothing, a close one a lot
    far, _, _ = contrastive_loss(a, _unit([1, 0], [-1, 0]), torch.tensor([0]), torch.tensor([[False, True]]), 0.05)
    near, _, _ = contrastive_loss(a, _unit([1, 0], [1, 0.05]), torch.tensor([0]), torch.tensor([[False, True]]), 0.05)
    assert float(far) < 1e-6 and float(near) > math.log(2) - 0.05
