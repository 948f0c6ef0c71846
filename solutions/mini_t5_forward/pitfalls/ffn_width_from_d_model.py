"""The feed-forward's hidden width hard-coded as 2 * d_model instead of d_ff.

Known-wrong variant: the reference, loaded afresh, with the code below in place of its own; the
MISTAKE comment marks the difference.
"""

from pathlib import Path

import flax.linen as nn

from grader.problems import load_module

MESSAGE = (
    "Your feed-forward's hidden layer has 2 * d_model units instead of d_ff. The two are equal "
    "in the walk-through (d_model = 8, d_ff = 16) but not in general, and the parameter tree "
    "then has the wrong shapes for ffn/up/kernel and ffn/down/kernel. Use the d_ff attribute "
    "the module is given: nn.Dense(self.d_ff) for the up projection."
)


reference = load_module(Path(__file__).parents[1] / "mini_t5_forward.py", f"{__name__}_reference")


class FeedForward(reference.FeedForward):
    def setup(self):
        self.up = nn.Dense(2 * self.d_model, use_bias=False)  # MISTAKE: the width is d_ff
        self.down = nn.Dense(self.d_model, use_bias=False)


reference.FeedForward = FeedForward


def mini_t5_forward(
    seed, x_enc_ids, x_dec_ids, vocab_size, d_model, num_heads, d_ff, num_enc_layers, num_dec_layers
):
    """The reference's entry, running the module tree with the mistake above."""
    return reference.mini_t5_forward(
        seed, x_enc_ids, x_dec_ids, vocab_size, d_model, num_heads, d_ff, num_enc_layers, num_dec_layers
    )
