"""Blind set B34: reader mistakes and correct variants written from the chapters alone."""
