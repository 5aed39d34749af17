"""Dense mixture-of-experts head: reduces the base model's vector to a smaller one.

Legend: b - graphs, i - in_dim, o - out_dim, E - experts.

    gate(x) = softmax(W_g x + b_g)                          (b, E)
    y       = sum_e gate_e(x) * (W_e x + b_e)               (b, o)

Each expert is one Linear(in_dim, out_dim); all experts run on every input
(dense gating, no routing, no load-balancing loss). The experts are stored as
one Linear(in_dim, E * out_dim) so they run as one matmul. The gate starts at
zero: a fresh head is the plain average of its experts.
"""

from __future__ import annotations

import torch
from torch import nn


class DenseMoEHead(nn.Module):
    def __init__(self, in_dim: int, out_dim: int, num_experts: int):
        super().__init__()
        self.in_dim, self.out_dim, self.num_experts = in_dim, out_dim, num_experts
        self.experts = nn.Linear(in_dim, num_experts * out_dim)  # expert e = rows e*o:(e+1)*o
        self.gate = nn.Linear(in_dim, num_experts)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        self.experts.reset_parameters()
        nn.init.zeros_(self.gate.weight)
        nn.init.zeros_(self.gate.bias)

    def expert_outputs(self, x: torch.Tensor) -> torch.Tensor:
        """(b, i) → (b, E, o): every expert's output."""
        return self.experts(x).view(x.size(0), self.num_experts, self.out_dim)  # (b, E, o)

    def forward(self, x: torch.Tensor, return_gates: bool = False):
        """(b, i) → (b, o) [, gates (b, E)]."""
        gates = self.gate(x).softmax(dim=-1)  # (b, E)
        y = (gates.unsqueeze(-1) * self.expert_outputs(x)).sum(dim=1)  # (b, o)
        return (y, gates) if return_gates else y

    def extra_repr(self) -> str:
        return f"{self.in_dim} -> {self.out_dim}, experts={self.num_experts} x Linear, dense softmax gate"
