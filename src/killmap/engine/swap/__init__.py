"""The swap: a mutant's code put into the already-imported module of a forked session,
where that is provably the program importing the mutant afresh would be.
"""
