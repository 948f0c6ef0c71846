"""Feed-forward uses GELU instead of ReLU.

Known-wrong variant: the reference, loaded afresh, with the code below in place of its own; the
MISTAKE comment marks the difference.
"""

from pathlib import Path

import flax.linen as nn

from grader.problems import load_module

MESSAGE = (
    "Your feed-forward network uses GELU (as T5 v1.1 and GPT-2 do). In this problem it is "
    "Dense(d_ff) -> ReLU -> Dense(d_model), without biases."
)


reference = load_module(Path(__file__).parents[1] / "mini_t5_forward.py", f"{__name__}_reference")


class FeedForward(reference.FeedForward):
    def __call__(self, x):
        """Applies the same two-layer ReLU network to every row.

        Args:
            x: (T, D) float32.

        Returns:
            (T, D) float32.
        """
        return self.down(nn.gelu(self.up(x)))  # MISTAKE: ReLU


reference.FeedForward = FeedForward


def mini_t5_forward(
    seed, x_enc_ids, x_dec_ids, vocab_size, d_model, num_heads, d_ff, num_enc_layers, num_dec_layers
):
    """The reference's entry, running the module tree with the mistake above."""
    return reference.mini_t5_forward(
        seed, x_enc_ids, x_dec_ids, vocab_size, d_model, num_heads, d_ff, num_enc_layers, num_dec_layers
    )
