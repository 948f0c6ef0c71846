"""What a learner runs: progress, hints, watch, the notebook's check()."""
