"""Containment: the sandboxes, and what a run wrote where it must not, prevented
(Landlock), heard (inotify), found and undone (the guards, the tree watch).
"""
