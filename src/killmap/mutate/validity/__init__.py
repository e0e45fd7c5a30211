"""Whether a mutant can run as written: it parses, and pyflakes finds no name it cannot
run with, asked of the changed function alone first, else of the module reduced around it.
"""
