"""What is imported inside the pytest process of a run: the recorder plugin and what it
leans on. Nothing here imports the project under test, the workers or containment (an
import-linter contract holds the last two).
"""
