"""Blind set B20: reader mistakes and correct variants for the 28 checks, written from the chapters alone."""
