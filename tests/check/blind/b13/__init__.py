"""Blind set B13: reader mistakes and correct variants, written from the chapters alone."""
