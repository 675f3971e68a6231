"""Blind set B14: reader mistakes and correct variants, written from the chapters alone."""
