"""A checkout's problems: the problem model, case files, known-wrong variants."""
