"""Reach: which test ran which line of the files a mutation changes (sys.monitoring on
3.12+, probes before, coverage's tracer where asked), and what a session imported.
"""
