"""What every layer shares: case marks and kinds, comparison, verdict types, atomic files, reading a submission."""
