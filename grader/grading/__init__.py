"""Grading one file: caches, the trusted side (the reference, or a handout's recorded answers), the engine."""
