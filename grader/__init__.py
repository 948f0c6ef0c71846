"""flax-katas grader: grades learners' JAX/Flax katas against reference solutions."""
