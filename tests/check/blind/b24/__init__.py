"""Blind set B24: reader mistakes and correct variants for the 28 checks, written from the chapters alone."""
