"""What an instructor runs: checking problems, new problems, handouts, a class's batch, Gradescope."""
