"""Explaining a failure: relations between outputs, the first wrong part, named mistakes."""
